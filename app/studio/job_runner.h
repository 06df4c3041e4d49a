// JobRunner: runs long engine work off the UI thread, one current job at a
// time, numbered so that a stale result (superseded or cancelled) is dropped.
#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <atomic>
#include <functional>
#include <memory>
#include <type_traits>

template <typename T>
class QFutureWatcher;

namespace tessera::studio {

/// What a job's work throws when it notices its cancel flag
/// (JobContext::throwIfCancelled): the job ends as cancelled, not failed.
struct Cancelled {};

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
    /// Throws Cancelled when the job was cancelled or superseded.
    void throwIfCancelled() const {
        if (isCancelled()) throw Cancelled();
    }

private:
    std::function<void(double)> m_progress;
    std::shared_ptr<std::atomic<bool>> m_cancelled;
};

/// The result of a job's work function: a value, an error message, or cancelled.
struct JobOutcome {
    std::shared_ptr<void> value;  // the work's result (its type is the job's)
    QString error;                // empty on success
    bool cancelled = false;       // the work threw Cancelled
};

class JobRunner : public QObject {
    Q_OBJECT
public:
    explicit JobRunner(QObject* parent = nullptr);
    /// Cancels and waits for workers still running (only happens at shutdown).
    ~JobRunner() override;

    /// Starts `work` (a callable: Result(const JobContext&)) on the thread
    /// pool and supersedes any current job. `onDone` (void(const Result&), or
    /// nullptr) runs on the UI thread with the result if the job is still the
    /// current one when it finishes. Exceptions become jobFailed, Cancelled
    /// becomes jobCancelled. Returns the id.
    template <typename Work, typename Done>
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
    using ErasedWork = std::function<std::shared_ptr<void>(const JobContext&)>;
    using ErasedDone = std::function<void(const std::shared_ptr<void>&)>;
    int startErased(const QString& title, ErasedWork work, ErasedDone onDone);

    int m_nextId = 1;
    int m_current = 0;  // 0 = none
    std::shared_ptr<std::atomic<bool>> m_currentCancel;
    QList<QFutureWatcher<JobOutcome>*> m_watchers;
};

/// The one-line form of an exception message for dialogs and logs.
QString oneLine(const QString& message);

template <typename Work, typename Done>
int JobRunner::start(const QString& title, Work work, Done onDone) {
    using Result = std::decay_t<std::invoke_result_t<Work&, const JobContext&>>;
    ErasedDone done;
    if constexpr (!std::is_same_v<Done, std::nullptr_t>)
        done = [onDone = std::move(onDone)](const std::shared_ptr<void>& value) {
            onDone(*std::static_pointer_cast<const Result>(value));
        };
    return startErased(
        title,
        [work = std::move(work)](const JobContext& context) -> std::shared_ptr<void> {
            return std::make_shared<Result>(work(context));
        },
        std::move(done));
}

}  // namespace tessera::studio
