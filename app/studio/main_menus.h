// MainMenus: the studio's menu bar and toolbar: File (open, recent models,
// sessions, save as ONNX, export package, graph image and plot), Edit
// (EditController's), Model, Schedule, Tune, View (zoom, collapse modes, the
// docks), Help, and the toolbar with the build settings and node search.
// Each action calls a controller or the window; the recent-files list is the
// only state kept here (in QSettings).
#pragma once

#include <QList>
#include <QObject>
#include <QStringList>

class QAction;
class QDockWidget;
class QLineEdit;
class QMenu;

namespace tessera::studio {

class MainWindow;

class MainMenus : public QObject {
    Q_OBJECT
public:
    /// Adds the menus and the toolbar to `window`; `docks` get View menu toggles.
    MainMenus(MainWindow* window, const QList<QDockWidget*>& docks);

    QAction* runAction() const { return m_runAction; }
    QLineEdit* searchBox() const { return m_search; }

    /// The recent model files, newest first (QSettings).
    static QStringList recentFiles();
    /// Puts `path` first in the recent files and the File ▸ Open recent menu.
    void addRecentFile(const QString& path);

    /// File ▸ Export graph image: SVG or PNG of the graph view.
    void exportGraphDialog();
    /// File ▸ Export plot: the plot tab shown, as PNG, SVG or PDF.
    void exportPlotDialog();

private:
    void createFileMenu();
    void createViewMenu(QMenu* viewMenu, const QList<QDockWidget*>& docks);
    void createToolBar(QMenu* tuneMenu);
    void rebuildRecentMenu();

    MainWindow* m_window;
    QAction* m_openAction = nullptr;
    QAction* m_runAction = nullptr;
    QAction* m_cancelAction = nullptr;
    QAction* m_fitAction = nullptr;
    QMenu* m_recentMenu = nullptr;
    QLineEdit* m_search = nullptr;
};

}  // namespace tessera::studio
