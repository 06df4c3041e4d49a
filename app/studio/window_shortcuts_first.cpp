#include "app/studio/window_shortcuts_first.h"

#include <QAction>
#include <QKeyEvent>
#include <QLineEdit>

namespace tessera::studio {

namespace {

class WindowShortcutsFirst : public QObject {
public:
    WindowShortcutsFirst(QWidget* window, QObject* parent) : QObject(parent), m_window(window) {}

protected:
    bool eventFilter(QObject* watched, QEvent* e) override {
        if (e->type() != QEvent::ShortcutOverride) return QObject::eventFilter(watched, e);
        auto* key = static_cast<QKeyEvent*>(e);
        if (!(key->modifiers() & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier)))
            return false;
        for (QKeySequence::StandardKey editing :
             {QKeySequence::Copy, QKeySequence::Cut, QKeySequence::Paste, QKeySequence::Undo,
              QKeySequence::Redo, QKeySequence::SelectAll})
            if (key->matches(editing)) return false;
        const QKeySequence pressed(key->keyCombination());
        for (const QAction* a : m_window->findChildren<QAction*>())
            if (a->isEnabled() && a->shortcuts().contains(pressed)) {
                e->ignore();  // not overridden: the window's shortcut runs
                return true;
            }
        return false;
    }

private:
    QWidget* m_window;
};

}  // namespace

void letWindowShortcutsPass(QLineEdit* field, QWidget* window) {
    field->installEventFilter(new WindowShortcutsFirst(window, field));
}

}  // namespace tessera::studio
