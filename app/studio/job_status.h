// JobStatus: the window's status bar: a message (the open model, a job's
// title, an error), the progress of the running job with a Cancel button, and
// the second stage of opening a model (the graph layout, 60-100 %).
#pragma once

#include <QList>
#include <QObject>
#include <QString>

class QLabel;
class QProgressBar;
class QStatusBar;
class QToolButton;
class QWidget;

namespace tessera::widgets {
class GraphView;
}

namespace tessera::studio {

class JobRunner;
class Workspace;

class JobStatus : public QObject {
    Q_OBJECT
public:
    /// Fills `bar`: the message, `permanent` (the last-run label), the
    /// progress bar and Cancel. `graphView`'s pending layout counts as busy.
    JobStatus(QStatusBar* bar, QWidget* permanent, Workspace* workspace,
              widgets::GraphView* graphView);

    /// Shows the jobs of `runners` (title, progress); `blocking` ones (open,
    /// Run, Tune) also show Cancel.
    void watch(const QList<JobRunner*>& runners, bool blocking);
    void showMessage(const QString& text);
    QString message() const;
    /// The open model's name (or nothing).
    void showModel();
    /// Progress and Cancel from what runs now (call when that changes).
    void update();
    QProgressBar* progressBar() const { return m_progress; }

signals:
    void cancelRequested();
    /// After update(): whether a model is being opened (Run waits for it).
    void loadingChanged(bool loading);

private:
    void watch(JobRunner* runner, bool blocking);
    bool blockingJobRuns() const;

    Workspace* m_workspace;
    widgets::GraphView* m_graphView;
    QLabel* m_label;
    QProgressBar* m_progress;
    QToolButton* m_cancel;
    QList<JobRunner*> m_blocking;
};

}  // namespace tessera::studio
