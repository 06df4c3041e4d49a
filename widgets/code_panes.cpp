// CodePanes: combo + CodeView per pane in a splitter, a find box and a diff toggle.
#include "widgets/code_panes.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QScrollBar>
#include <QSplitter>
#include <QVBoxLayout>

#include "widgets/code_view.h"
#include "widgets/text_diff.h"

namespace tessera::widgets {
namespace {

CodeLanguage languageOf(const QString& kind) {
    if (kind == "LLVM IR") return CodeLanguage::LlvmIr;
    if (kind == "Assembly" || kind == "PTX") return CodeLanguage::Assembly;
    if (kind == "CUDA C") return CodeLanguage::CudaC;
    return CodeLanguage::LoopIr;
}

}  // namespace

CodePanes::CodePanes(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    auto* bar = new QHBoxLayout;
    m_find = new QLineEdit(this);
    m_find->setPlaceholderText("Find in code");
    m_find->setClearButtonEnabled(true);
    m_findStatus = new QLabel(this);
    m_diff = new QCheckBox("Diff with previous step", this);
    m_diff->setToolTip("Show the loop IR as a diff against the previous schedule step");
    bar->addWidget(m_find, 1);
    bar->addWidget(m_findStatus);
    bar->addWidget(m_diff);
    layout->addLayout(bar);

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    for (int pane = 0; pane < 2; ++pane) {
        auto* box = new QWidget(splitter);
        auto* boxLayout = new QVBoxLayout(box);
        boxLayout->setContentsMargins(0, 0, 0, 0);
        boxLayout->setSpacing(2);
        m_combos[pane] = new QComboBox(box);
        m_combos[pane]->addItems(kinds());
        m_views[pane] = new CodeView(box);
        boxLayout->addWidget(m_combos[pane]);
        boxLayout->addWidget(m_views[pane], 1);
        splitter->addWidget(box);
        connect(m_combos[pane], &QComboBox::currentTextChanged, this, [this, pane]() { refresh(pane); });
    }
    m_combos[1]->setCurrentText("LLVM IR");
    layout->addWidget(splitter, 1);

    connect(m_diff, &QCheckBox::toggled, this, [this]() {
        refresh(0);
        refresh(1);
    });
    connect(m_find, &QLineEdit::textChanged, this, [this](const QString& t) { find(t); });
    connect(m_find, &QLineEdit::returnPressed, this, [this]() { find(m_find->text()); });
}

void CodePanes::setText(const QString& kind, const QString& text) {
    m_texts[kind] = text;
    for (int pane = 0; pane < 2; ++pane)
        if (shownKind(pane) == kind) refresh(pane);
}

void CodePanes::setPrevious(const QString& kind, const QString& text) {
    m_previous[kind] = text;
    for (int pane = 0; pane < 2; ++pane)
        if (shownKind(pane) == kind && diffEnabled()) refresh(pane);
}

void CodePanes::clear() {
    m_texts.clear();
    m_previous.clear();
    refresh(0);
    refresh(1);
}

void CodePanes::showKind(int pane, const QString& kind) { m_combos[pane]->setCurrentText(kind); }
QString CodePanes::shownKind(int pane) const { return m_combos[pane]->currentText(); }
void CodePanes::setDiffEnabled(bool on) { m_diff->setChecked(on); }
bool CodePanes::diffEnabled() const { return m_diff->isChecked(); }

void CodePanes::refresh(int pane) {
    const QString kind = shownKind(pane);
    const QString text = m_texts.value(kind);
    const bool diff = diffEnabled() && m_previous.contains(kind) && !text.isEmpty();
    m_views[pane]->setLanguage(diff ? CodeLanguage::Diff : languageOf(kind));
    const int scroll = m_views[pane]->verticalScrollBar()->value();
    m_views[pane]->setCode(diff ? lineDiff(m_previous.value(kind), text) : text);
    m_views[pane]->verticalScrollBar()->setValue(scroll);  // keep the place on live updates
    if (text.isEmpty())
        m_views[pane]->setPlaceholderText("Select a node to see its code.");
    if (!m_find->text().isEmpty()) find(m_find->text());  // the count of the new code too
}

QString CodePanes::findStatus() const { return m_findStatus->text(); }

int CodePanes::find(const QString& text) {
    const int n = m_views[0]->findText(text) + m_views[1]->findText(text);
    m_findStatus->setText(text.isEmpty() ? QString() : QString("%1 found").arg(n));
    return n;
}

}  // namespace tessera::widgets
