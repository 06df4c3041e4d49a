// isDark and followPalette (an event filter re-colouring a plot on PaletteChange).
#include "widgets/theme.h"

#include <qcustomplot.h>

#include <QEvent>

namespace tessera::widgets {
namespace {

void applyPalette(QCustomPlot* plot) {
    const QPalette& p = plot->palette();
    const QColor text = p.color(QPalette::WindowText);
    const QColor base = p.color(QPalette::Base);
    QColor grid = text;
    grid.setAlpha(isDark(p) ? 60 : 40);
    plot->setBackground(base);
    for (QCPAxis* axis : plot->axisRect()->axes()) {
        axis->setBasePen(QPen(text));
        axis->setTickPen(QPen(text));
        axis->setSubTickPen(QPen(text));
        axis->setTickLabelColor(text);
        axis->setLabelColor(text);
        axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
    }
    plot->legend->setBrush(base);
    plot->legend->setTextColor(text);
    plot->legend->setBorderPen(QPen(grid));
    plot->replot(QCustomPlot::rpQueuedReplot);
}

class PlotPaletteFollower : public QObject {
public:
    explicit PlotPaletteFollower(QCustomPlot* plot) : QObject(plot), m_plot(plot) {}
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (watched == m_plot && event->type() == QEvent::PaletteChange) applyPalette(m_plot);
        return false;
    }

private:
    QCustomPlot* m_plot;
};

}  // namespace

bool isDark(const QPalette& palette) { return palette.color(QPalette::Window).lightness() < 128; }

void followPalette(QCustomPlot* plot) {
    applyPalette(plot);
    plot->installEventFilter(new PlotPaletteFollower(plot));
}

}  // namespace tessera::widgets
