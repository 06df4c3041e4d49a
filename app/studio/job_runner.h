// JobRunner: runs long engine work off the UI thread, one current job at a
// time, numbered so that a stale result (superseded or cancelled) is dropped.
#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <any>
#include <atomic>
#include <functional>
#include <memory>

template <typename T>
class QFutureWatcher;

namespace tessera::studio {

/// What a job's work function sees: a progress sink and a cancel flag.
/// Both are safe to use from the worker thread.
class JobContext {
public:
    JobContext(std::function<void(double)> progress, std::shared_ptr<std::atomic<bool>> cancelled)
        : m_progress(std::move(progress)), m_cancelled(std::move(cancelled)) {}
    /// Reports progress in [0, 1].
    void reportProgress(double fraction) const {
        if (m_progress) m_progress(fraction);
    }
    bool isCancelled() const { return m_cancelled && m_cancelled->load(); }

private:
    std::function<void(double)> m_progress;
    std::shared_ptr<std::atomic<bool>> m_cancelled;
};

/// The result of a job's work function: a value, or an error message.
struct JobOutcome {
    std::any value;
    QString error;  // empty on success
};

class JobRunner : public QObject {
    Q_OBJECT
public:
    using Work = std::function<std::any(const JobContext&)>;
    using Done = std::function<void(const std::any&)>;

    explicit JobRunner(QObject* parent = nullptr);
    /// Cancels and waits for workers still running (only happens at shutdown).
    ~JobRunner() override;

    /// Starts `work` on the thread pool and supersedes any current job.
    /// `onDone` runs on the UI thread with the value if the job is still the
    /// current one when it finishes. Exceptions become jobFailed. Returns the id.
    int start(const QString& title, Work work, Done onDone);
    /// Drops the current job's result and asks it to stop at its next check.
    void cancel();
    bool isRunning() const { return m_current != 0; }
    int currentJob() const { return m_current; }

signals:
    void jobStarted(int id, const QString& title);
    void progressChanged(int id, double fraction);
    void jobFinished(int id);
    void jobFailed(int id, const QString& message);
    void jobCancelled(int id);

private:
    int m_nextId = 1;
    int m_current = 0;  // 0 = none
    std::shared_ptr<std::atomic<bool>> m_currentCancel;
    QList<QFutureWatcher<JobOutcome>*> m_watchers;
};

/// The one-line form of an exception message for dialogs and logs.
QString oneLine(const QString& message);

}  // namespace tessera::studio
