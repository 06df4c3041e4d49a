// LoadController: the load job, the input-shape question and the new document.
#include "app/studio/load_controller.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMimeData>
#include <QStringList>
#include <QTimer>
#include <memory>
#include <variant>

#include "app/studio/job_runner.h"
#include "app/studio/model_document.h"
#include "app/studio/workspace.h"
#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_importer.h"

namespace tessera::studio {
namespace {

// What the load job gives: the opened model, or the shapes to ask for.
using LoadOutcome = std::variant<std::shared_ptr<ModelDocument>, InputShapeRequest>;

// "Input shapes x:4x3" or "Input shapes and values from DIR".
QString describeChoice(const InputChoice& choice) {
    if (!choice.inputDir.isEmpty()) return "Input shapes and values from " + choice.inputDir;
    QStringList text;
    for (const auto& [name, dims] : choice.shapes)
        text << QString::fromStdString(name) + ":" + shapeText(dims);
    return "Input shapes " + text.join(", ");
}

}  // namespace

LoadController::LoadController(Workspace* workspace)
    : QObject(workspace), m_workspace(workspace), m_jobs(new JobRunner(this)) {
    m_workspace->setLoader(this);
    m_workspace->setShapeConfirmer(
        [this](std::function<void()> retry) { return confirmInputShapes(std::move(retry)); });
    connect(m_jobs, &JobRunner::jobFailed, this,
            [this](int, const QString& message) { fail(message); });
}

bool LoadController::isLoading() const { return m_jobs->isRunning(); }

QString LoadController::droppedModel(const QMimeData* mime) {
    if (!mime || !mime->hasUrls()) return {};
    for (const QUrl& url : mime->urls())
        if (url.isLocalFile() && url.toLocalFile().endsWith(".onnx", Qt::CaseInsensitive))
            return url.toLocalFile();
    return {};
}

void LoadController::openDialog() {
    const QString path =
        QFileDialog::getOpenFileName(m_workspace->dialogParent(), "Open model", QString(),
                                     "ONNX models (*.onnx);;All files (*)");
    if (!path.isEmpty()) open(path);
}

void LoadController::open(const QString& path) {
    // An ONNX test-case folder (model.onnx beside test_data_set_0/), as the
    // command line takes it: its model.
    if (QFileInfo(path).isDir() && QFileInfo(QDir(path).filePath("model.onnx")).isFile()) {
        openWith(QDir(path).filePath("model.onnx"), {});
        return;
    }
    openWith(path, {});
}

void LoadController::fail(const QString& message) {
    m_afterOpen = nullptr;  // nothing to resume
    m_workspace->reportError("Cannot open model", message);
    emit failed(message);
}

bool LoadController::mayReopen(const QString& title, const QString& why, const QString& instead) {
    const std::shared_ptr<ModelDocument> document = m_workspace->document();
    if (!document || (document->edits().empty() && m_workspace->traces().isEmpty())) return true;
    m_workspace->reportError(
        title, why + ", and its graph edits and hand schedules would be lost: " + instead);
    return false;
}

bool LoadController::confirmInputShapes(std::function<void()> retry) {
    const std::shared_ptr<ModelDocument> document = m_workspace->document();
    if (!document || !document->provisionalShapes()) return true;
    const ModelDocument::ProvisionalShapes proposed = *document->provisionalShapes();
    QString error;
    const std::optional<InputChoice> given = askInputShapes(
        m_workspace->dialogParent(), proposed.request, m_workspace->dialogsSuppressed(), &error);
    if (!given) {
        m_workspace->log("Input shapes not confirmed: nothing is built" +
                         (error.isEmpty() ? QString() : " (" + error + ")"));
        return false;
    }
    if (given->shapes == proposed.choice.shapes && given->inputDir == proposed.choice.inputDir) {
        document->setProvisionalShapes(std::nullopt);
        return true;
    }
    if (!mayReopen("Input shapes not changed", "Other shapes reopen the model",
                   "save the session, or use Model > Set input shape..."))
        return false;
    m_workspace->log("Reopening " + document->path() + " with the new input shapes" +
                     (retry ? QString(", then going on") : QString()));
    m_afterOpen = std::move(retry);
    openWith(document->path(), *given);
    return false;
}

void LoadController::chooseInputFiles() {
    const std::shared_ptr<ModelDocument> document = m_workspace->document();
    if (!document) {
        m_workspace->log("Open a model first, then choose its input files.");
        return;
    }
    const QString start = document->inputDir().isEmpty()
                              ? QFileInfo(document->path()).absolutePath()
                              : document->inputDir();
    const QString dir = QFileDialog::getExistingDirectory(
        m_workspace->dialogParent(), "Input files (a folder of input_0.pb, input_1.pb, ...)",
        start);
    if (!dir.isEmpty()) useInputFiles(dir);
}

bool LoadController::useInputFiles(const QString& dir) {
    const std::shared_ptr<ModelDocument> document = m_workspace->document();
    if (!document) return false;
    if (!QFileInfo(QDir(dir).filePath("input_0.pb")).isFile()) {
        m_workspace->reportError("Input files not used",
                                 dir +
                                     " holds no input_0.pb (an ONNX test-data folder: "
                                     "input_0.pb, input_1.pb, ... in the model's input order)");
        return false;
    }
    if (!mayReopen("Input files not used", "The input files reopen the model",
                   "save the session first, or choose them before editing"))
        return false;
    m_workspace->log("Reopening " + document->path() + " for the input files in " + dir);
    openWith(document->path(), InputChoice{{}, dir});
    return true;
}

void LoadController::openWith(const QString& path, const InputChoice& choice,
                              const std::optional<InputShapeRequest>& provisional) {
    if (choice.empty()) m_workspace->log("Opening " + path);  // not again after the shapes dialog
    if (!QFileInfo(path).isFile()) {
        fail(path + ": no such file");
        return;
    }
    m_jobs->start(
        "Loading " + QFileInfo(path).fileName(),
        [path, choice](const JobContext& context) -> LoadOutcome {
            // Stages: ONNX import 0-60 %, then the graph layout 60-100 % (the window's).
            context.reportProgress(0.05);
            try {
                auto document = choice.inputDir.isEmpty()
                                    ? ModelDocument::load(path, choice.shapes)
                                    : ModelDocument::loadForInputs(path, choice.inputDir);
                context.reportProgress(0.6);
                return document;
            } catch (const UserError& e) {
                // A model with symbolic input dims: ask for shapes (on the UI
                // thread), again with the reason when the last answer failed.
                std::exception_ptr failure = std::current_exception();
                // No shapes help a model whose weights file is missing.
                frontend::check_external_data(path.toStdString());
                InputShapeRequest request;
                try {
                    request = inputShapeRequest(path);
                } catch (const UserError&) {
                }
                if (request.empty()) std::rethrow_exception(failure);
                if (!choice.empty()) request.error = QString::fromStdString(e.what());
                return request;
            }
        },
        [this, path, choice, provisional](const LoadOutcome& value) {
            if (const auto* failedRequest = std::get_if<InputShapeRequest>(&value)) {
                InputShapeRequest asked = *failedRequest;
                asked.proposalFailed = provisional.has_value();
                const InputShapeRequest* request = &asked;
                if (choice.empty()) {
                    // Open with the proposed shapes first; Run, Tune and
                    // Export confirm them (or ask here if they do not open it).
                    QString unused;
                    std::optional<InputChoice> proposed =
                        askInputShapes(m_workspace->dialogParent(), *request, true, &unused);
                    if (proposed) {
                        openWith(path, *proposed, *request);
                        return;
                    }
                }
                QString error;
                std::optional<InputChoice> given =
                    askInputShapes(m_workspace->dialogParent(), *request,
                                   m_workspace->dialogsSuppressed(), &error);
                if (!given) {
                    if (error.isEmpty()) {  // the user cancelled: nothing went wrong
                        m_afterOpen = nullptr;
                        m_workspace->log("Opening " + path + " cancelled (no input shapes given)");
                        emit failed(path + ": no input shapes given");
                        return;
                    }
                    fail(error.startsWith(path) ? error  // the import's error names the file
                                                : path + ": " + error);
                    return;
                }
                m_workspace->log(describeChoice(*given) +
                                 (given->inputDir.isEmpty()
                                      ? " (Model > Set input shape... changes them)"
                                      : " (Run runs on these files)"));
                openWith(path, *given);
                return;
            }
            const std::shared_ptr<ModelDocument>& document =
                std::get<std::shared_ptr<ModelDocument>>(value);
            if (provisional) {
                document->setProvisionalShapes(
                    ModelDocument::ProvisionalShapes{*provisional, choice});
                m_workspace->log(describeChoice(choice) +
                                 " proposed for the symbolic input dims: Run, Tune and Export ask "
                                 "to confirm them");
            }
            m_workspace->setDocument(document);  // and no schedule traces
            m_workspace->log(QString("Loaded %1: %2 nodes, %3 GFLOP per inference as imported "
                                     "(a Run counts the build's, after the graph passes)")
                                 .arg(document->path())
                                 .arg(document->nodeCount())
                                 .arg(document->totalFlops() / 1e9, 0, 'g', 4));
            emit opened(document->path());
            if (m_afterOpen) {  // the Run (Tune, Export) that asked for other shapes
                std::function<void()> resume = std::move(m_afterOpen);
                m_afterOpen = nullptr;
                QTimer::singleShot(0, this, resume);
            }
        });
}

}  // namespace tessera::studio
