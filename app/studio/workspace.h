// Workspace: what the studio's controllers share: the open model, the one set
// of build settings (the toolbar's target, opt level and threads, the pass
// panel's passes, the tuning database), the per-node schedule traces, the
// message log and error reports, and the notice that something a build reads
// changed. The window owns it and the controllers; none of them owns another.
#pragma once

#include <QMap>
#include <QObject>
#include <QString>
#include <functional>
#include <memory>
#include <vector>

#include "app/studio/build_settings.h"
#include "app/studio/hand_schedule_check.h"
#include "app/studio/model_document.h"
#include "engine/schedule/trace.h"

class QWidget;

namespace tessera::studio {

class BuildSettingsBar;
class LoadController;
class PassPipelinePanel;

class Workspace : public QObject {
    Q_OBJECT
public:
    /// `dialogParent` parents error dialogs.
    Workspace(BuildSettingsBar* settingsBar, PassPipelinePanel* passPanel, QWidget* dialogParent);

    const std::shared_ptr<ModelDocument>& document() const { return m_document; }
    void setDocument(std::shared_ptr<ModelDocument> document);
    /// A model is being opened (Run and Tune wait for it).
    bool isLoading() const;
    /// The controller that opens models (it registers itself).
    void setLoader(const LoadController* loader) { m_loader = loader; }
    /// Before Run, Tune or Export builds: the open model's input shapes
    /// confirmed (a model opened with proposed shapes for its symbolic dims
    /// asks now). False when the action should not go on now: cancelled, or
    /// the model reopens with other shapes, and then `retry` runs once it is
    /// open.
    bool confirmInputShapes(std::function<void()> retry = {}) {
        return m_confirmShapes ? m_confirmShapes(std::move(retry)) : true;
    }
    void setShapeConfirmer(std::function<bool(std::function<void()>)> confirm) {
        m_confirmShapes = std::move(confirm);
    }

    /// The one set of options Run, Tune, Export and the code views build with.
    BuildSettings buildSettings() const;
    QString tuningDatabase() const { return m_tuningDb; }
    void setTuningDatabase(const QString& path) { m_tuningDb = path; }

    /// Schedule traces by node name (the schedule editor's steps).
    using Traces = QMap<QString, std::vector<schedule::Step>>;
    const Traces& traces() const { return m_traces; }
    /// The hand schedule of the kernel holding `node` (no steps: unscheduled).
    void setTrace(const QString& node, const std::vector<schedule::Step>& steps);
    /// Back to the records' or the default schedule.
    void removeTrace(const QString& node);
    void setTraces(const Traces& traces) { m_traces = traces; }
    /// The traces as Run and Export pass them to the build.
    KernelTraces kernelTraces() const;

    /// When set, errors only go to the log (screenshot mode, tests).
    void setDialogsSuppressed(bool suppressed) { m_dialogsSuppressed = suppressed; }
    bool dialogsSuppressed() const { return m_dialogsSuppressed; }
    QWidget* dialogParent() const { return m_dialogParent; }

    void log(const QString& message) { emit logged(message); }
    /// Logs "error: title: message", emits errorReported and shows a dialog
    /// unless dialogs are suppressed.
    void reportError(const QString& title, const QString& message);
    /// Something builds read changed ("graph edited", "schedules", "tuning records").
    void noteBuildInputChanged(const QString& what) {
        ++m_revision;
        emit buildInputChanged(what);
    }
    /// Counts the changes to what builds read (the document and build inputs).
    int revision() const { return m_revision; }
    /// Names everything a build reads now (document, revision, settings,
    /// hand schedules): equal keys build the same model.
    QString buildInputsKey() const;

    /// What a build of the inputs named `inputsKey` made of the hand
    /// schedules (the code views', Run's, a check's).
    void setHandScheduleCheck(const QString& inputsKey, const HandScheduleCheck& check);
    /// The last check, if it was of the current inputs; else null.
    const HandScheduleCheck* handScheduleCheck() const;

signals:
    void logged(const QString& message);
    void errorReported(const QString& title, const QString& message);
    void buildInputChanged(const QString& what);

private:
    BuildSettingsBar* m_settingsBar;
    PassPipelinePanel* m_passPanel;
    const LoadController* m_loader = nullptr;
    std::function<bool(std::function<void()>)> m_confirmShapes;
    QWidget* m_dialogParent;
    std::shared_ptr<ModelDocument> m_document;
    QString m_tuningDb;
    Traces m_traces;
    bool m_dialogsSuppressed = false;
    int m_revision = 0;
    QString m_checkedInputs;  // what m_handCheck is of
    HandScheduleCheck m_handCheck;
};

}  // namespace tessera::studio
