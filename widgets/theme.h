// Light and dark themes following the system palette: whether a palette is
// dark, and QCustomPlot colours that follow the plot's palette (also when it
// changes later).
#pragma once

#include <QColor>
#include <QPalette>

class QCustomPlot;

namespace tessera::widgets {

/// True when the palette's window colour is dark (a dark system theme).
bool isDark(const QPalette& palette);

/// `light` under a light palette, `dark` under a dark one.
inline QColor themed(const QPalette& palette, const QColor& light, const QColor& dark) {
    return isDark(palette) ? dark : light;
}

/// Colours the plot's background, axes, labels, grid and legend from its
/// palette now and again on every palette change; replots.
void followPalette(QCustomPlot* plot);

}  // namespace tessera::widgets
