// CodeView: a read-only monospace text view with line numbers and simple
// highlighting of the loop IR's TVMScript-like text.
#pragma once

#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QVector>

namespace tessera::widgets {

/// What a CodeView shows; picks the highlighting rules.
enum class CodeLanguage { LoopIr, LlvmIr, Assembly, CudaC, Diff };

/// Highlights loop IR keywords (for, with, T.block, T.axis, ...), numbers,
/// strings and comments; other languages get their own keyword sets, and a
/// diff colours added/removed lines.
class LoopIrHighlighter : public QSyntaxHighlighter {
    Q_OBJECT
public:
    explicit LoopIrHighlighter(QTextDocument* document);
    void setLanguage(CodeLanguage language);
    CodeLanguage language() const { return m_language; }
    /// Colours for a dark background (brighter) or a light one.
    void setDark(bool dark);
    bool dark() const { return m_dark; }
    /// The format of keywords (tests check it follows the theme).
    QTextCharFormat keywordFormat() const { return m_keyword; }

protected:
    void highlightBlock(const QString& text) override;

private:
    struct Rule {
        QRegularExpression pattern;
        QTextCharFormat format;
    };
    QVector<Rule> m_rules;
    QTextCharFormat m_comment, m_keyword;
    CodeLanguage m_language = CodeLanguage::LoopIr;
    bool m_dark = false;
};

class CodeView : public QPlainTextEdit {
    Q_OBJECT
public:
    explicit CodeView(QWidget* parent = nullptr);

    /// Replaces the shown text (scrolls to the top).
    void setCode(const QString& text);
    void setLanguage(CodeLanguage language) { m_highlighter->setLanguage(language); }
    CodeLanguage language() const { return m_highlighter->language(); }
    /// Highlights every occurrence of `text` and moves the cursor to the next
    /// one (wrapping). Returns the number of occurrences.
    int findText(const QString& text, bool backward = false);
    /// Width in pixels of the line-number gutter.
    int lineNumberAreaWidth() const;
    /// Paints the gutter; called by the gutter widget.
    void paintLineNumbers(QPaintEvent* event);

protected:
    void resizeEvent(QResizeEvent* event) override;
    /// Follows the palette (light or dark theme).
    void changeEvent(QEvent* event) override;

private:
    void updateLineNumberAreaWidth();
    void updateLineNumberArea(const QRect& rect, int dy);

    QWidget* m_lineNumberArea;
    LoopIrHighlighter* m_highlighter;
};

}  // namespace tessera::widgets
