// MainWindow: the code panes show the kernel that runs the selected node, as
// the studio's build settings make it (kernel_code_job.h).
#include <QDockWidget>
#include <QUndoStack>

#include "app/studio/kernel_code_job.h"
#include "app/studio/main_window.h"
#include "engine/core/error.h"
#include "widgets/code_panes.h"
#include "widgets/graph_view.h"

namespace tessera::studio {

QString MainWindow::kernelBuildKey() const {
    const BuildSettings s = buildSettings();
    QString key = QString("%1|%2|%3|O%4|%5|t%6|%7")
                      .arg(quintptr(m_document.get()))
                      .arg(m_undo->index())
                      .arg(s.target)
                      .arg(s.optLevel)
                      .arg(s.passes.join(","))
                      .arg(s.threads)
                      .arg(s.records);
    for (const auto& [node, trace] : m_workspace->kernelTraces())
        key += "|" + QString::fromStdString(node + "=" + trace.to_json());
    return key;
}

void MainWindow::showKernelCode(int node) {
    m_codeJobs->cancel();
    if (!m_document || node < 0 || node >= m_document->nodeCount()) return;
    const QString name = QString::fromStdString(m_document->graph().nodes[size_t(node)].name);
    const QString key = kernelBuildKey();
    std::shared_ptr<const driver::CompiledModel> cached = key == m_kernelBuildKey ? m_kernelBuild : nullptr;
    std::shared_ptr<const graph::Graph> graph = m_document->snapshot();
    const BuildSettings settings = buildSettings();
    const KernelTraces traces = m_workspace->kernelTraces();
    const QString previousKernel = m_codeDock->property("kernel").toString();
    m_codeDock->setWindowTitle("Code - building the kernel of " + name + "...");
    m_codeJobs->start(
        "Building the kernel of " + name,
        [graph, settings, traces, name, cached](const JobContext& context) {
            try {
                return kernelCodeOf(*graph, settings, traces, name, cached, context);
            } catch (const UserError& e) {  // shown in the panes, not as a failed job
                KernelCode failed;
                failed.node = name;
                failed.error = QString::fromStdString(e.what());
                return failed;
            }
        },
        [this, key, name, previousKernel](const KernelCode& code) {
            if (!code.error.isEmpty()) {
                m_codePanes->clear();
                m_codePanes->setText("Loop IR", "# the kernel of node '" + name + "':\n# " +
                                                    oneLine(code.error) + "\n");
                m_codeDock->setProperty("kernel", QString());
                m_codeDock->setWindowTitle("Code - " + name);
                emit kernelCodeShown(QString());
                return;
            }
            m_kernelBuild = code.model;
            m_kernelBuildKey = key;
            // Diff against what the same kernel showed before (a schedule edit).
            const bool sameKernel = previousKernel == code.kernel;
            for (const auto& [kind, text] : {std::pair{QString("Loop IR"), code.loopIr},
                                             {QString("LLVM IR"), code.llvmIr},
                                             {QString("Assembly"), code.assembly},
                                             {QString("CUDA C"), code.cudaC},
                                             {QString("PTX"), code.ptx}}) {
                m_codePanes->setPrevious(kind, sameKernel ? m_codePanes->text(kind) : text);
                m_codePanes->setText(kind, text);
            }
            m_codeDock->setProperty("kernel", code.kernel);
            m_codeDock->setWindowTitle(QString("Code - kernel %1 (%2) \u00b7 %3")
                                           .arg(code.kernel, code.nodes.join(", "),
                                                buildSettings().describe()));
            QVector<int> members;
            for (const QString& n : code.nodes) {
                const int index = m_document ? m_document->graph().find_node(n.toStdString()) : -1;
                if (index >= 0) members << index;
            }
            m_graphView->setHighlightedNodes(members, QColor(0x30, 0x80, 0xe0));  // the kernel's nodes
            emit kernelCodeShown(code.kernel);
        });
}

}  // namespace tessera::studio
