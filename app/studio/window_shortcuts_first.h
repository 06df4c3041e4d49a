// Window shortcuts that a text field would otherwise take for itself.
#pragma once

class QLineEdit;
class QWidget;

namespace tessera::studio {

/// On X11 a line edit takes Ctrl+E and Ctrl+A as cursor moves (end and start
/// of line) before the window's shortcuts see them, so Export package
/// (Ctrl+E) did nothing while the node search had focus. With this, a key
/// with Ctrl, Alt or Meta that an enabled action of `window` has as its
/// shortcut goes to that action, unless it is one of the field's editing
/// keys (copy, cut, paste, undo, redo, select all); End and Home still move
/// the cursor.
void letWindowShortcutsPass(QLineEdit* field, QWidget* window);

}  // namespace tessera::studio
