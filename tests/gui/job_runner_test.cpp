// JobRunner: results of superseded or cancelled jobs are dropped; errors are reported.
#include "app/studio/job_runner.h"

#include <gtest/gtest.h>

#include <QSignalSpy>
#include <QtTest/QTest>
#include <atomic>
#include <new>

#include "engine/core/error.h"

using tessera::studio::JobContext;
using tessera::studio::JobRunner;

TEST(JobRunner, SupersededJobResultIsDropped) {
    JobRunner runner;
    std::atomic<bool> release{false};
    std::vector<int> delivered;
    QSignalSpy finished(&runner, &JobRunner::jobFinished);
    auto slowJob = [&](int value) {
        return [&release, value](const JobContext&) {
            while (!release.load()) QThread::msleep(1);
            return value;
        };
    };
    auto deliver = [&](const int& v) { delivered.push_back(v); };
    const int first = runner.start("first", slowJob(1), deliver);
    const int second = runner.start("second", slowJob(2), deliver);
    EXPECT_NE(first, second);
    EXPECT_EQ(runner.currentJob(), second);
    release = true;
    ASSERT_TRUE(finished.wait(10000));
    QTest::qWait(50);
    ASSERT_EQ(delivered, std::vector<int>{2});
    EXPECT_EQ(finished.count(), 1);
    EXPECT_EQ(finished.first().first().toInt(), second);
    EXPECT_FALSE(runner.isRunning());
}

TEST(JobRunner, CancelledJobSeesTheFlagAndDeliversNothing) {
    JobRunner runner;
    std::atomic<bool> sawCancel{false};
    bool delivered = false;
    QSignalSpy cancelled(&runner, &JobRunner::jobCancelled);
    runner.start(
        "loop",
        [&](const JobContext& ctx) {
            while (!ctx.isCancelled()) QThread::msleep(1);
            sawCancel = true;
            return 0;
        },
        [&](int) { delivered = true; });
    runner.cancel();
    EXPECT_EQ(cancelled.count(), 1);
    ASSERT_TRUE(QTest::qWaitFor([&]() { return sawCancel.load(); }, 10000));
    QTest::qWait(50);
    EXPECT_FALSE(delivered);
}

TEST(JobRunner, ExceptionsBecomeOneLineFailures) {
    JobRunner runner;
    QSignalSpy failed(&runner, &JobRunner::jobFailed);
    runner.start(
        "bad",
        [](const JobContext&) -> int {
            throw tessera::UserError("model.onnx: node 'x': bad\nmore detail");
        },
        nullptr);
    ASSERT_TRUE(failed.wait(10000));
    EXPECT_EQ(failed.first().at(1).toString(), "model.onnx: node 'x': bad");
    // Out of memory says so (a Run at a huge input shape showed "std::bad_alloc").
    runner.start(
        "huge", [](const JobContext&) -> int { throw std::bad_alloc(); }, nullptr);
    ASSERT_TRUE(failed.wait(10000));
    EXPECT_TRUE(failed.last().at(1).toString().startsWith("out of memory"))
        << failed.last().at(1).toString().toStdString();
}

TEST(JobRunner, ProgressArrivesOnTheUiThread) {
    JobRunner runner;
    QSignalSpy progress(&runner, &JobRunner::progressChanged);
    QSignalSpy finished(&runner, &JobRunner::jobFinished);
    runner.start(
        "steps",
        [](const JobContext& ctx) {
            for (int i = 1; i <= 4; ++i) ctx.reportProgress(i / 4.0);
            return 0;
        },
        nullptr);
    ASSERT_TRUE(finished.wait(10000));
    ASSERT_EQ(progress.count(), 4);
    EXPECT_DOUBLE_EQ(progress.last().at(1).toDouble(), 1.0);
}

TEST(JobRunner, WorkThatThrowsCancelledEndsAsCancelledNotFailed) {
    JobRunner runner;
    QSignalSpy cancelled(&runner, &JobRunner::jobCancelled);
    QSignalSpy failed(&runner, &JobRunner::jobFailed);
    bool delivered = false;
    runner.start(
        "stops itself",
        [](const JobContext&) -> int { throw tessera::studio::Cancelled(); },
        [&](int) { delivered = true; });
    ASSERT_TRUE(cancelled.wait(10000));
    EXPECT_EQ(failed.count(), 0);
    EXPECT_FALSE(delivered);
    EXPECT_FALSE(runner.isRunning());
}

TEST(JobRunner, WorkRunsOffTheUiThreadAndItsTypedResultArrivesOnIt) {
    JobRunner runner;
    QSignalSpy finished(&runner, &JobRunner::jobFinished);
    QThread* worker = nullptr;
    QThread* deliveredOn = nullptr;
    std::string result;
    runner.start(
        "typed",
        [&](const JobContext&) {
            worker = QThread::currentThread();
            return std::string("kernel");
        },
        [&](const std::string& value) {
            deliveredOn = QThread::currentThread();
            result = value;
        });
    ASSERT_TRUE(finished.wait(10000));
    EXPECT_NE(worker, QCoreApplication::instance()->thread());
    EXPECT_EQ(deliveredOn, QCoreApplication::instance()->thread());
    EXPECT_EQ(result, "kernel");
}
