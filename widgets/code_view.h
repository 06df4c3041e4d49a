// CodeView: a read-only monospace text view with line numbers and simple
// highlighting of the loop IR's TVMScript-like text.
#pragma once

#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QVector>

namespace tessera::widgets {

/// Highlights loop IR keywords (for, with, T.block, T.axis, ...), numbers,
/// strings and comments.
class LoopIrHighlighter : public QSyntaxHighlighter {
    Q_OBJECT
public:
    explicit LoopIrHighlighter(QTextDocument* document);

protected:
    void highlightBlock(const QString& text) override;

private:
    struct Rule {
        QRegularExpression pattern;
        QTextCharFormat format;
    };
    QVector<Rule> m_rules;
    QTextCharFormat m_comment;
};

class CodeView : public QPlainTextEdit {
    Q_OBJECT
public:
    explicit CodeView(QWidget* parent = nullptr);

    /// Replaces the shown text (scrolls to the top).
    void setCode(const QString& text);
    /// Width in pixels of the line-number gutter.
    int lineNumberAreaWidth() const;
    /// Paints the gutter; called by the gutter widget.
    void paintLineNumbers(QPaintEvent* event);

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void updateLineNumberAreaWidth();
    void updateLineNumberArea(const QRect& rect, int dy);

    QWidget* m_lineNumberArea;
    LoopIrHighlighter* m_highlighter;
};

}  // namespace tessera::widgets
