// LoadController: the load job, the input-shape question and the new document.
#include "app/studio/load_controller.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QMimeData>
#include <QStringList>
#include <memory>
#include <variant>

#include "app/studio/job_runner.h"
#include "app/studio/model_document.h"
#include "app/studio/workspace.h"
#include "engine/core/error.h"

namespace tessera::studio {
namespace {

// What the load job gives: the opened model, or the shapes to ask for.
using LoadOutcome = std::variant<std::shared_ptr<ModelDocument>, InputShapeRequest>;

}  // namespace

LoadController::LoadController(Workspace* workspace)
    : QObject(workspace), m_workspace(workspace), m_jobs(new JobRunner(this)) {
    m_workspace->setLoader(this);
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

void LoadController::open(const QString& path) { openWith(path, {}); }

void LoadController::fail(const QString& message) {
    m_workspace->reportError("Cannot open model", message);
    emit failed(message);
}

void LoadController::openWith(const QString& path, const InputChoice& choice) {
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
        [this, path](const LoadOutcome& value) {
            if (const auto* request = std::get_if<InputShapeRequest>(&value)) {
                QString error;
                std::optional<InputChoice> given =
                    askInputShapes(m_workspace->dialogParent(), *request,
                                   m_workspace->dialogsSuppressed(), &error);
                if (!given) {
                    fail(error.startsWith(path)
                             ? error  // the import's error names the file
                             : path + ": " + (error.isEmpty() ? "no input shapes given" : error));
                    return;
                }
                if (!given->inputDir.isEmpty()) {
                    m_workspace->log("Input shapes and values from " + given->inputDir +
                                     " (Run runs on these files)");
                } else {
                    QStringList text;
                    for (const auto& [name, dims] : given->shapes)
                        text << QString::fromStdString(name) + ":" + shapeText(dims);
                    m_workspace->log("Input shapes " + text.join(", ") +
                                     " (Model > Set input shape... changes them)");
                }
                openWith(path, *given);
                return;
            }
            const std::shared_ptr<ModelDocument>& document =
                std::get<std::shared_ptr<ModelDocument>>(value);
            m_workspace->setDocument(document);  // and no schedule traces
            m_workspace->log(QString("Loaded %1: %2 nodes, %3 GFLOP per inference")
                                 .arg(document->path())
                                 .arg(document->nodeCount())
                                 .arg(document->totalFlops() / 1e9, 0, 'g', 4));
            emit opened(document->path());
        });
}

}  // namespace tessera::studio
