// JobStatus: the status bar's message, progress and Cancel.
#include "app/studio/job_status.h"

#include <QLabel>
#include <QProgressBar>
#include <QStatusBar>
#include <QToolButton>
#include <algorithm>

#include "app/studio/job_runner.h"
#include "app/studio/workspace.h"
#include "widgets/graph_view.h"

namespace tessera::studio {

JobStatus::JobStatus(QStatusBar* bar, QWidget* permanent, Workspace* workspace,
                     widgets::GraphView* graphView)
    : QObject(bar),
      m_workspace(workspace),
      m_graphView(graphView),
      m_label(new QLabel(bar)),
      m_progress(new QProgressBar(bar)),
      m_cancel(new QToolButton(bar)) {
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(260);
    m_progress->setVisible(false);
    m_cancel->setText("Cancel");
    m_cancel->setVisible(false);
    connect(m_cancel, &QToolButton::clicked, this, &JobStatus::cancelRequested);
    bar->addWidget(m_label, 1);
    bar->addPermanentWidget(permanent);
    bar->addPermanentWidget(m_progress);
    bar->addPermanentWidget(m_cancel);
    m_label->setText("Open a model (Ctrl+O) or drop an .onnx file here.");
    connect(m_workspace, &Workspace::errorReported, this,
            [this](const QString& title, const QString& message) {
                showMessage(title + ": " + message);
            });
}

void JobStatus::watch(const QList<JobRunner*>& runners, bool blocking) {
    for (JobRunner* runner : runners) watch(runner, blocking);
}

void JobStatus::watch(JobRunner* runner, bool blocking) {
    if (blocking) m_blocking.append(runner);
    connect(runner, &JobRunner::jobStarted, this, [this](int, const QString& title) {
        showMessage(title + "...");
        update();
    });
    connect(runner, &JobRunner::progressChanged, this,
            [this](int, double fraction) { m_progress->setValue(int(fraction * 1000)); });
    connect(runner, &JobRunner::jobFinished, this, [this]() {
        showModel();
        update();
    });
    connect(runner, &JobRunner::jobFailed, this, &JobStatus::update);
    connect(runner, &JobRunner::jobCancelled, this, [this]() {
        m_workspace->log("Job cancelled.");
        update();
    });
}

void JobStatus::showMessage(const QString& text) { m_label->setText(text); }

QString JobStatus::message() const { return m_label->text(); }

void JobStatus::showModel() {
    const std::shared_ptr<ModelDocument>& document = m_workspace->document();
    showMessage(document ? document->displayName() : QString());
}

bool JobStatus::blockingJobRuns() const {
    return std::any_of(m_blocking.begin(), m_blocking.end(),
                       [](const JobRunner* r) { return r->isRunning(); });
}

void JobStatus::update() {
    const std::shared_ptr<ModelDocument>& document = m_workspace->document();
    const bool jobs = blockingJobRuns();
    const bool layout = !m_workspace->isLoading() && m_graphView->isLayoutPending() && document;
    m_progress->setVisible(jobs || layout);
    m_cancel->setVisible(jobs);
    m_progress->setRange(0, 1000);
    if (layout) {  // the second stage of opening a model
        m_progress->setValue(std::max(m_progress->value(), 600));
        showMessage(QString("Laying out %1 nodes...").arg(document->nodeCount()));
    } else if (!jobs) {
        m_progress->setValue(0);
        if (document && m_label->text().startsWith("Laying out")) showModel();
    }
    emit loadingChanged(m_workspace->isLoading());
}

}  // namespace tessera::studio
