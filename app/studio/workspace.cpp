// Workspace: the shared state of the studio's controllers.
#include "app/studio/workspace.h"

#include <QMessageBox>

#include "app/studio/build_settings_bar.h"
#include "app/studio/load_controller.h"
#include "app/studio/pass_pipeline_panel.h"

namespace tessera::studio {

Workspace::Workspace(BuildSettingsBar* settingsBar, PassPipelinePanel* passPanel,
                     QWidget* dialogParent)
    : QObject(dialogParent),
      m_settingsBar(settingsBar),
      m_passPanel(passPanel),
      m_dialogParent(dialogParent) {}

void Workspace::setDocument(std::shared_ptr<ModelDocument> document) {
    m_document = std::move(document);
    m_traces.clear();
    ++m_revision;
}

bool Workspace::isLoading() const { return m_loader && m_loader->isLoading(); }

BuildSettings Workspace::buildSettings() const {
    BuildSettings settings;
    settings.target = m_settingsBar->target();
    settings.optLevel = m_settingsBar->optLevel();
    settings.passes = m_passPanel->pipeline();
    settings.threads = m_settingsBar->threads();
    settings.records = m_tuningDb;
    return settings;
}

void Workspace::setTrace(const QString& node, const std::vector<schedule::Step>& steps) {
    m_traces[node] = steps;
}

void Workspace::removeTrace(const QString& node) { m_traces.remove(node); }

KernelTraces Workspace::kernelTraces() const {
    KernelTraces traces;
    for (auto it = m_traces.begin(); it != m_traces.end(); ++it) {
        schedule::Trace trace;
        trace.steps = it.value();
        traces[it.key().toStdString()] = trace;  // no steps: the kernel unscheduled
    }
    return traces;
}

QString Workspace::buildInputsKey() const {
    const BuildSettings s = buildSettings();
    QString key = QString("%1|%2|%3|O%4|%5|t%6|%7")
                      .arg(quintptr(m_document.get()))
                      .arg(m_revision)
                      .arg(s.target)
                      .arg(s.optLevel)
                      .arg(s.passes.join(","))
                      .arg(s.threads)
                      .arg(s.records);
    for (const auto& [node, trace] : kernelTraces())
        key += "|" + QString::fromStdString(node + "=" + trace.to_json());
    return key;
}

void Workspace::setHandScheduleCheck(const QString& inputsKey, const HandScheduleCheck& check) {
    m_checkedInputs = inputsKey;
    m_handCheck = check;
}

const HandScheduleCheck* Workspace::handScheduleCheck() const {
    return !m_checkedInputs.isEmpty() && m_checkedInputs == buildInputsKey() ? &m_handCheck
                                                                             : nullptr;
}

void Workspace::reportError(const QString& title, const QString& message) {
    log("error: " + title + ": " + message);
    emit errorReported(title, message);
    if (m_dialogsSuppressed) return;
    // Window-modal but not blocking: no nested event loop inside job callbacks.
    auto* box = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Ok, m_dialogParent);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

}  // namespace tessera::studio
