// Helpers shared by the GUI tests: example model paths, drops, image checks.
#pragma once

#include <QDropEvent>
#include <QFileInfo>
#include <QImage>
#include <QMimeData>
#include <QSet>
#include <QString>
#include <QUrl>
#include <QWidget>
#include <QtTest/QTest>

namespace tessera::gui_test {

/// The example model: the lead's small CNN, else an ONNX conformance conv.
inline QString exampleModel() {
    const QString cnn = QString(TESSERA_SOURCE_DIR) + "/resources/models/small_cnn/model.onnx";
    if (QFileInfo(cnn).isFile()) return cnn;
    return "/usr/share/libonnx-testdata/data/node/test_conv_with_strides_padding/model.onnx";
}

/// A second, different model (for switching).
inline QString otherModel() { return "/usr/share/libonnx-testdata/data/node/test_relu/model.onnx"; }

/// Sends a drag-enter and a drop of `path` to `target`, like a file manager.
/// Returns whether the drag-enter was accepted.
inline bool dropFile(QWidget* target, const QString& path) {
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(path)});
    const QPoint pos = target->rect().center();
    QDragEnterEvent enter(pos, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(target, &enter);
    const bool accepted = enter.isAccepted();
    QDropEvent drop(QPointF(pos), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(target, &drop);
    return accepted;
}

/// Number of distinct colours in an image (capped at `cap`).
inline int distinctColors(const QImage& image, int cap = 100000) {
    QSet<QRgb> colors;
    const QImage img = image.convertToFormat(QImage::Format_RGB32);
    for (int y = 0; y < img.height(); y += 2)
        for (int x = 0; x < img.width(); x += 2) {
            colors.insert(img.pixel(x, y));
            if (colors.size() >= cap) return cap;
        }
    return int(colors.size());
}

}  // namespace tessera::gui_test
