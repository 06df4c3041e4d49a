// JobRunner: QtConcurrent workers, job ids, stale results dropped.
#include "app/studio/job_runner.h"

#include <QFutureWatcher>
#include <QPointer>
#include <QtConcurrent>
#include <new>

#include "engine/core/error.h"

namespace tessera::studio {

QString oneLine(const QString& message) {
    QString text = message.trimmed();
    const qsizetype newline = text.indexOf('\n');
    if (newline >= 0) text = text.left(newline).trimmed();
    return text.isEmpty() ? QStringLiteral("unknown error") : text;
}

JobRunner::JobRunner(QObject* parent) : QObject(parent) {}

JobRunner::~JobRunner() {
    if (m_currentCancel) m_currentCancel->store(true);
    for (QFutureWatcher<JobOutcome>* watcher : m_watchers) {
        watcher->disconnect(this);
        watcher->waitForFinished();
    }
}

int JobRunner::startErased(const QString& title, ErasedWork work, ErasedDone onDone) {
    cancel();
    const int id = m_nextId++;
    m_current = id;
    auto cancelled = std::make_shared<std::atomic<bool>>(false);
    m_currentCancel = cancelled;

    // Progress hops to the UI thread; `this` outlives every worker (see the destructor).
    JobContext context(
        [this, id](double fraction) {
            QMetaObject::invokeMethod(
                this,
                [this, id, fraction]() {
                    if (id == m_current) emit progressChanged(id, fraction);
                },
                Qt::QueuedConnection);
        },
        cancelled);

    QFuture<JobOutcome> future = QtConcurrent::run([work = std::move(work), context]() {
        JobOutcome outcome;
        try {
            outcome.value = work(context);
        } catch (const Cancelled&) {
            outcome.cancelled = true;
        } catch (const UserError& e) {
            outcome.error = oneLine(QString::fromStdString(e.what()));
        } catch (const InternalError& e) {
            outcome.error = "internal error: " + oneLine(QString::fromStdString(e.what()));
        } catch (const std::bad_alloc&) {
            outcome.error = QStringLiteral(
                "out of memory: the model's buffers at these input shapes do not fit in this "
                "machine's memory (std::bad_alloc); give smaller input shapes");
        } catch (const std::exception& e) {
            outcome.error = oneLine(QString::fromStdString(e.what()));
        } catch (...) {
            outcome.error = QStringLiteral("unknown error");
        }
        return outcome;
    });

    auto* watcher = new QFutureWatcher<JobOutcome>(this);
    m_watchers.append(watcher);
    connect(watcher, &QFutureWatcherBase::finished, this,
            [this, watcher, id, onDone = std::move(onDone)]() {
                m_watchers.removeOne(watcher);
                watcher->deleteLater();
                if (id != m_current) return;  // stale: superseded or cancelled
                m_current = 0;
                m_currentCancel.reset();
                const JobOutcome outcome = watcher->result();
                if (outcome.cancelled) {
                    emit jobCancelled(id);
                    return;
                }
                if (!outcome.error.isEmpty()) {
                    emit jobFailed(id, outcome.error);
                    return;
                }
                try {
                    if (onDone) onDone(outcome.value);
                } catch (const std::exception& e) {
                    // Nothing may throw into the event loop.
                    emit jobFailed(id, oneLine(QString::fromStdString(e.what())));
                    return;
                }
                emit jobFinished(id);
            });
    watcher->setFuture(future);
    emit jobStarted(id, title);
    return id;
}

void JobRunner::cancel() {
    if (m_current == 0) return;
    const int id = m_current;
    if (m_currentCancel) m_currentCancel->store(true);
    m_current = 0;
    m_currentCancel.reset();
    emit jobCancelled(id);
}

}  // namespace tessera::studio
