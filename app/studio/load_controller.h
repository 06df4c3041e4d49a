// LoadController: File ▸ Open: opens a model in a job (ONNX import off the UI
// thread), asks for static shapes when its inputs have symbolic dims and
// opens it again with them, and installs the result as the Workspace's
// document; opened or failed follows (the previous model stays open on failure).
#pragma once

#include <QObject>
#include <QString>

#include "app/studio/input_shape_dialog.h"

class QMimeData;

namespace tessera::studio {

class JobRunner;
class Workspace;

class LoadController : public QObject {
    Q_OBJECT
public:
    explicit LoadController(Workspace* workspace);

    /// Starts loading `path` in the background.
    void open(const QString& path);
    /// Opens `path` with static shapes for its symbolic inputs, or for a
    /// folder of input files. With neither, a model with symbolic dims opens
    /// with the proposed ones (the answer last given for the file, else every
    /// symbolic dim 1), to be confirmed when Run, Tune or Export first builds
    /// it (confirmInputShapes); when those do not open it, it asks
    /// (askInputShapes), and an answer that does not open it is asked again
    /// with the reason.
    void openWith(const QString& path, const InputChoice& choice,
                  const std::optional<InputShapeRequest>& provisional = std::nullopt);
    /// The question the open model's proposed shapes still owe (see
    /// Workspace::confirmInputShapes): true when there is none or the answer
    /// keeps them; an answer with other shapes reopens the model with them,
    /// and `retry` (the action that asked) runs once it is open.
    bool confirmInputShapes(std::function<void()> retry = {});
    /// Asks for a model file, then open.
    void openDialog();
    /// Model > Input files...: asks for a folder of input_N.pb files (an
    /// ONNX test-data folder) and reopens the model for them, so that Run
    /// (and the Int8 error tab) runs on them instead of random inputs; a
    /// static model as well as one with symbolic dims. Refused while graph
    /// edits or hand schedules would be lost.
    void chooseInputFiles();
    /// Reopens the open model for the input files in `dir` (chooseInputFiles
    /// without the dialog); false when refused.
    bool useInputFiles(const QString& dir);
    bool isLoading() const;
    JobRunner* jobs() const { return m_jobs; }
    /// The first local .onnx file among dropped URLs, or an empty string.
    static QString droppedModel(const QMimeData* mime);

signals:
    /// The Workspace holds the newly opened document (no traces yet).
    void opened(const QString& path);
    void failed(const QString& message);

private:
    void fail(const QString& message);
    /// False (reported as `title`: `why`, the loss, `instead`) when reopening
    /// the model would lose its graph edits or hand schedules.
    bool mayReopen(const QString& title, const QString& why, const QString& instead);

    Workspace* m_workspace;
    JobRunner* m_jobs;
    std::function<void()> m_afterOpen;  // the action a reopen for other shapes resumes
};

}  // namespace tessera::studio
