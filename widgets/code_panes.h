// CodePanes: two CodeViews side by side, each showing one of the texts of the
// selected kernel (loop IR, LLVM IR, assembly, CUDA C), a shared find box and
// "diff with the previous schedule step" (Compiler Explorer style).
#pragma once

#include <QMap>
#include <QString>
#include <QStringList>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;

namespace tessera::widgets {

class CodeView;

class CodePanes : public QWidget {
    Q_OBJECT
public:
    /// The texts the panes can show, in combo-box order.
    static QStringList kinds() { return {"Loop IR", "LLVM IR", "Assembly", "CUDA C", "PTX"}; }

    explicit CodePanes(QWidget* parent = nullptr);

    /// Sets the text of one kind ("Loop IR", ...). Panes showing it update.
    void setText(const QString& kind, const QString& text);
    QString text(const QString& kind) const { return m_texts.value(kind); }
    /// The text to diff `kind` against (the previous schedule step's).
    void setPrevious(const QString& kind, const QString& text);
    /// Clears every text (no kernel selected).
    void clear();

    /// Shows `kind` in pane 0 (left) or 1 (right).
    void showKind(int pane, const QString& kind);
    QString shownKind(int pane) const;
    CodeView* view(int pane) const { return m_views[pane]; }
    void setDiffEnabled(bool on);
    bool diffEnabled() const;
    /// Finds `text` in both panes; returns the total number of matches.
    int find(const QString& text);
    QLineEdit* findBox() const { return m_find; }
    /// "N found" for the find box's text in the code shown now.
    QString findStatus() const;

private:
    void refresh(int pane);

    QMap<QString, QString> m_texts, m_previous;
    CodeView* m_views[2];
    QComboBox* m_combos[2];
    QCheckBox* m_diff;
    QLineEdit* m_find;
    QLabel* m_findStatus;
};

}  // namespace tessera::widgets
