// The input-shape dialog of symbolic models (see the header).
#include "app/studio/input_shape_dialog.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QStringList>

#include "engine/frontend/onnx/onnx_importer.h"

namespace tessera::studio {

namespace {

QString settingsKey(const QString& path, const std::string& name) {
    // '/' separates QSettings groups: keep the key one level deep.
    QString file = QFileInfo(path).absoluteFilePath();
    file.replace('/', '|');
    return "inputShapes/" + file + "|" + QString::fromStdString(name);
}

QString inputDirKey(const QString& path) {
    QString file = QFileInfo(path).absoluteFilePath();
    file.replace('/', '|');
    return "inputFiles/" + file;
}

}  // namespace

QString rememberedInputDir(const QString& path) {
    return QSettings().value(inputDirKey(path)).toString();
}

void rememberInputDir(const QString& path, const QString& dir) {
    QSettings().setValue(inputDirKey(path), dir);
}

InputShapeRequest inputShapeRequest(const QString& path) {
    InputShapeRequest r;
    r.path = path;
    frontend::IoKinds kinds = frontend::onnx_io_kinds(path.toStdString());
    for (size_t i = 0; i < kinds.input_names.size(); ++i) {
        if (kinds.input_fixed[i] || kinds.inputs[i] != frontend::ValueKind::Tensor) continue;
        r.names.push_back(kinds.input_names[i]);
        r.dims.push_back(kinds.input_dims[i]);
    }
    return r;
}

QString proposedShape(const QString& path, const std::string& name,
                      const std::vector<std::string>& dims) {
    const QString remembered = QSettings().value(settingsKey(path, name)).toString();
    std::vector<int64_t> shape;
    if (!remembered.isEmpty() && parseShapeText(remembered, &shape) && shape.size() == dims.size())
        return remembered;
    QStringList parts;
    for (const std::string& d : dims) {
        bool number = false;
        QString::fromStdString(d).toLongLong(&number);
        parts << (number ? QString::fromStdString(d) : QString("1"));
    }
    return parts.join('x');
}

QString declaredShape(const std::string& name, const std::vector<std::string>& dims) {
    QStringList parts;
    for (const std::string& d : dims) parts << QString::fromStdString(d);
    return QString::fromStdString(name) + ": " +
           (dims.empty() ? QString("shape not declared") : parts.join(QChar(0x00d7)));
}

bool parseShapeText(const QString& text, std::vector<int64_t>* shape) {
    shape->clear();
    const QStringList parts =
        QString(text).replace('x', ' ').replace(',', ' ').split(' ', Qt::SkipEmptyParts);
    for (const QString& part : parts) {
        bool ok = false;
        const qlonglong v = part.toLongLong(&ok);
        if (!ok || v < 0) return false;
        shape->push_back(v);
    }
    return !shape->empty();
}

std::optional<InputChoice> askInputShapes(QWidget* parent, const InputShapeRequest& request,
                                          bool suppressed, QString* error) {
    if (suppressed && !request.error.isEmpty()) {  // nobody to ask again
        *error = request.error;
        return std::nullopt;
    }
    std::vector<QString> answers;
    for (size_t i = 0; i < request.names.size(); ++i)
        answers.push_back(proposedShape(request.path, request.names[i], request.dims[i]));
    QString inputDir = rememberedInputDir(request.path);
    if (!suppressed) {
        QDialog dialog(parent);
        dialog.setWindowTitle("Input shapes");
        auto* form = new QFormLayout(&dialog);
        form->addRow(new QLabel(QFileInfo(request.path).fileName() +
                                " has symbolic input dims; give the shapes to compile it for:"));
        if (!request.error.isEmpty()) {
            auto* why =
                new QLabel((request.proposalFailed ? "The proposed shapes do not fit the model: "
                                                   : "Not opened with the last answer: ") +
                           request.error);
            why->setObjectName("inputShapeError");
            why->setWordWrap(true);
            why->setStyleSheet("color: #b00020;");
            form->addRow(why);
        }
        std::vector<QLineEdit*> edits;
        for (size_t i = 0; i < request.names.size(); ++i) {
            auto* edit = new QLineEdit(answers[i]);
            edit->setObjectName("inputShape_" + QString::fromStdString(request.names[i]));
            form->addRow(declaredShape(request.names[i], request.dims[i]), edit);
            edits.push_back(edit);
        }
        // A model whose graph depends on an input's value (silero's If on
        // its sample rate) opens only with that value: input files give it.
        auto* dir = new QLineEdit(inputDir);
        dir->setObjectName("inputShapeFolder");
        dir->setPlaceholderText("or a folder of input_N.pb files");
        dir->setToolTip(
            "An ONNX test-data folder: its input_0.pb, input_1.pb, ... give the "
            "shapes and the values the import needs; Run runs on them");
        dir->setMinimumWidth(dir->fontMetrics().averageCharWidth() * 40);
        auto* browse = new QPushButton("Browse...");
        QObject::connect(browse, &QPushButton::clicked, &dialog, [&dialog, dir]() {
            const QString chosen =
                QFileDialog::getExistingDirectory(&dialog, "ONNX test-data folder", dir->text());
            if (!chosen.isEmpty()) dir->setText(chosen);
        });
        auto* dirRow = new QHBoxLayout;
        dirRow->addWidget(dir);
        dirRow->addWidget(browse);
        form->addRow("Input files", dirRow);
        auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
        QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
        QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
        form->addRow(buttons);
        if (dialog.exec() != QDialog::Accepted) return std::nullopt;
        for (size_t i = 0; i < edits.size(); ++i) answers[i] = edits[i]->text();
        inputDir = dir->text().trimmed();
    }
    rememberInputDir(request.path, inputDir);
    if (!inputDir.isEmpty()) {
        if (!QFileInfo(inputDir + "/input_0.pb").isFile()) {
            *error = inputDir + ": no input_0.pb in the folder";
            return std::nullopt;
        }
        return InputChoice{{}, inputDir};
    }
    InputShapes shapes;
    for (size_t i = 0; i < request.names.size(); ++i) {
        std::vector<int64_t> shape;
        if (!parseShapeText(answers[i], &shape) ||
            (!request.dims[i].empty() && shape.size() != request.dims[i].size())) {
            *error = "'" + answers[i] + "' is not a shape for " +
                     declaredShape(request.names[i], request.dims[i]);
            return std::nullopt;
        }
        shapes[request.names[i]] = shape;
        // The user's answer is proposed next time; the studio's own
        // proposal is not written back (a failing one stuck as the answer).
        if (!suppressed)
            QSettings().setValue(settingsKey(request.path, request.names[i]), answers[i]);
    }
    return InputChoice{shapes, {}};
}

}  // namespace tessera::studio
