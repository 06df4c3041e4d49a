// CodeView: line-number gutter (Qt's code editor pattern) and a loop IR highlighter.
#include "widgets/code_view.h"

#include "widgets/theme.h"

#include <QFontDatabase>
#include <QPainter>
#include <QTextBlock>

namespace tessera::widgets {
namespace {

QTextCharFormat makeFormat(const QColor& color, bool bold = false, bool italic = false) {
    QTextCharFormat f;
    f.setForeground(color);
    if (bold) f.setFontWeight(QFont::Bold);
    f.setFontItalic(italic);
    return f;
}

// The gutter: forwards painting to the CodeView.
class LineNumberArea : public QWidget {
public:
    explicit LineNumberArea(CodeView* view) : QWidget(view), m_view(view) {}
    QSize sizeHint() const override { return QSize(m_view->lineNumberAreaWidth(), 0); }

protected:
    void paintEvent(QPaintEvent* event) override { m_view->paintLineNumbers(event); }

private:
    CodeView* m_view;
};

}  // namespace

LoopIrHighlighter::LoopIrHighlighter(QTextDocument* document) : QSyntaxHighlighter(document) {
    setLanguage(CodeLanguage::LoopIr);
}

void LoopIrHighlighter::setLanguage(CodeLanguage language) {
    m_language = language;
    m_rules.clear();
    // Light colours after VS Code's light theme, dark ones after its dark theme.
    auto pick = [this](QColor light, QColor dark) { return m_dark ? dark : light; };
    const QTextCharFormat keyword =
        makeFormat(pick(QColor(0x00, 0x33, 0xb3), QColor(0x56, 0x9c, 0xd6)), true);
    const QTextCharFormat tirCall =
        makeFormat(pick(QColor(0x87, 0x10, 0x94), QColor(0xc5, 0x86, 0xc0)));
    const QTextCharFormat block =
        makeFormat(pick(QColor(0xa3, 0x15, 0x15), QColor(0xf4, 0x87, 0x71)), true);
    const QTextCharFormat number =
        makeFormat(pick(QColor(0x09, 0x86, 0x58), QColor(0xb5, 0xce, 0xa8)));
    const QTextCharFormat string =
        makeFormat(pick(QColor(0x06, 0x7d, 0x17), QColor(0xce, 0x91, 0x78)));
    const QTextCharFormat decorator =
        makeFormat(pick(QColor(0x9e, 0x88, 0x0d), QColor(0xdc, 0xdc, 0xaa)));
    m_keyword = keyword;
    m_rules.append({QRegularExpression(R"(\b-?\d+(\.\d+)?([eE][-+]?\d+)?f?\b)"), number});
    switch (language) {
        case CodeLanguage::LoopIr:
        case CodeLanguage::Diff:
            m_rules.append(
                {QRegularExpression(R"(\b(def|for|in|with|if|else|elif|return|while|and|or|not)\b)"),
                 keyword});
            m_rules.append({QRegularExpression(R"(\bT\.[A-Za-z_][\w.]*)"), tirCall});
            m_rules.append({QRegularExpression(R"(\bT\.(block|init|reads|writes|where)\b)"), block});
            m_rules.append({QRegularExpression(R"(@[\w.]+)"), decorator});
            break;
        case CodeLanguage::LlvmIr:
            m_rules.append({QRegularExpression(
                                R"(\b(define|declare|ret|br|label|load|store|call|phi|getelementptr|inbounds|alloca|icmp|fcmp|select|fadd|fsub|fmul|fdiv|add|sub|mul|sdiv|shl|and|or|xor|sext|zext|trunc|bitcast|fptosi|sitofp|insertelement|extractelement|shufflevector|tail|nsw|nuw|fast|align|to)\b)"),
                            keyword});
            m_rules.append({QRegularExpression(R"(%[\w.]+)"), tirCall});
            m_rules.append({QRegularExpression(R"(@[\w.]+)"), block});
            m_rules.append(
                {QRegularExpression(R"(\b(void|ptr|i1|i8|i32|i64|float|double|<\d+ x \w+>)\b)"),
                 decorator});
            break;
        case CodeLanguage::Assembly:
            m_rules.append({QRegularExpression(R"(^\s*[a-z][a-z0-9]*\b)"), keyword});
            m_rules.append({QRegularExpression(R"(%[a-z0-9]+)"), tirCall});
            m_rules.append({QRegularExpression(R"(^\s*\.[\w.]+)"), decorator});
            m_rules.append({QRegularExpression(R"(^[\w.$]+:)"), block});
            break;
        case CodeLanguage::CudaC:
            m_rules.append({QRegularExpression(
                                R"(\b(extern|__global__|__shared__|__syncthreads|void|float|int|for|if|else|return|const|unsigned|long)\b)"),
                            keyword});
            m_rules.append({QRegularExpression(R"(\b(blockIdx|threadIdx|blockDim)\.[xyz]\b)"), block});
            break;
    }
    m_rules.append({QRegularExpression(R"("[^"]*"|'[^']*')"), string});
    m_comment = makeFormat(m_dark ? QColor(0x8a, 0x99, 0x8a) : QColor(0x70, 0x70, 0x70), false, true);
    rehighlight();
}

void LoopIrHighlighter::setDark(bool dark) {
    if (dark == m_dark) return;
    m_dark = dark;
    setLanguage(m_language);
}

void LoopIrHighlighter::highlightBlock(const QString& text) {
    if (m_language == CodeLanguage::Diff && (text.startsWith("+ ") || text.startsWith("- "))) {
        QTextCharFormat f;
        const bool added = text.startsWith('+');
        if (m_dark)
            f.setBackground(added ? QColor(0x2a, 0x4a, 0x2a) : QColor(0x5a, 0x2a, 0x2a));
        else
            f.setBackground(added ? QColor(0xd8, 0xf5, 0xd8) : QColor(0xf9, 0xd6, 0xd6));
        setFormat(0, int(text.size()), f);
    }
    for (const Rule& rule : m_rules) {
        auto it = rule.pattern.globalMatch(text);
        while (it.hasNext()) {
            const QRegularExpressionMatch m = it.next();
            setFormat(int(m.capturedStart()), int(m.capturedLength()), rule.format);
        }
    }
    // Comments ("#" or "//"; ";" in LLVM IR) win over everything after them.
    const QChar hash = m_language == CodeLanguage::LlvmIr ? QChar(';') : QChar('#');
    int comment = int(text.indexOf(hash));
    const int slashes = int(text.indexOf("//"));
    if (comment < 0 || (slashes >= 0 && slashes < comment)) comment = slashes;
    if (comment >= 0) setFormat(comment, int(text.size()) - comment, m_comment);
}

CodeView::CodeView(QWidget* parent) : QPlainTextEdit(parent) {
    setReadOnly(true);
    setLineWrapMode(QPlainTextEdit::NoWrap);
    QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    mono.setPointSizeF(9.5);
    setFont(mono);
    setTabStopDistance(QFontMetricsF(mono).horizontalAdvance(' ') * 4);
    m_lineNumberArea = new LineNumberArea(this);
    m_highlighter = new LoopIrHighlighter(document());
    m_highlighter->setDark(isDark(palette()));
    connect(this, &QPlainTextEdit::blockCountChanged, this, &CodeView::updateLineNumberAreaWidth);
    connect(this, &QPlainTextEdit::updateRequest, this, &CodeView::updateLineNumberArea);
    updateLineNumberAreaWidth();
}

void CodeView::changeEvent(QEvent* event) {
    QPlainTextEdit::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) m_highlighter->setDark(isDark(palette()));
}

void CodeView::setCode(const QString& text) {
    setPlainText(text);
    moveCursor(QTextCursor::Start);
}

int CodeView::findText(const QString& text, bool backward) {
    QList<QTextEdit::ExtraSelection> selections;
    if (text.isEmpty()) {
        setExtraSelections(selections);
        return 0;
    }
    QTextCursor cursor(document());
    while (!(cursor = document()->find(text, cursor)).isNull()) {
        QTextEdit::ExtraSelection sel;
        sel.cursor = cursor;
        sel.format.setBackground(QColor(0xff, 0xe0, 0x80));
        sel.format.setForeground(Qt::black);  // readable under a dark theme too
        selections.append(sel);
    }
    setExtraSelections(selections);
    if (selections.isEmpty()) return 0;
    const QTextDocument::FindFlags flags = backward ? QTextDocument::FindBackward : QTextDocument::FindFlags();
    if (!find(text, flags)) {
        moveCursor(backward ? QTextCursor::End : QTextCursor::Start);
        find(text, flags);
    }
    return int(selections.size());
}

int CodeView::lineNumberAreaWidth() const {
    int digits = 1;
    for (int max = qMax(1, blockCount()); max >= 10; max /= 10) ++digits;
    return 10 + fontMetrics().horizontalAdvance(QLatin1Char('9')) * qMax(3, digits);
}

void CodeView::updateLineNumberAreaWidth() { setViewportMargins(lineNumberAreaWidth(), 0, 0, 0); }

void CodeView::updateLineNumberArea(const QRect& rect, int dy) {
    if (dy)
        m_lineNumberArea->scroll(0, dy);
    else
        m_lineNumberArea->update(0, rect.y(), m_lineNumberArea->width(), rect.height());
    if (rect.contains(viewport()->rect())) updateLineNumberAreaWidth();
}

void CodeView::resizeEvent(QResizeEvent* event) {
    QPlainTextEdit::resizeEvent(event);
    const QRect cr = contentsRect();
    m_lineNumberArea->setGeometry(QRect(cr.left(), cr.top(), lineNumberAreaWidth(), cr.height()));
}

void CodeView::paintLineNumbers(QPaintEvent* event) {
    QPainter painter(m_lineNumberArea);
    painter.fillRect(event->rect(), palette().color(QPalette::AlternateBase));
    painter.setPen(palette().color(QPalette::PlaceholderText));
    QTextBlock block = firstVisibleBlock();
    int number = block.blockNumber();
    int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
    int bottom = top + qRound(blockBoundingRect(block).height());
    while (block.isValid() && top <= event->rect().bottom()) {
        if (block.isVisible() && bottom >= event->rect().top())
            painter.drawText(0, top, m_lineNumberArea->width() - 5, fontMetrics().height(),
                             Qt::AlignRight, QString::number(number + 1));
        block = block.next();
        top = bottom;
        bottom = top + qRound(blockBoundingRect(block).height());
        ++number;
    }
}

}  // namespace tessera::widgets
