// Concrete shapes for a model's symbolic or unknown input dims, asked when the
// studio opens such a model (pre-filled, remembered per model file).
#pragma once

#include <QString>
#include <QWidget>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessera::studio {

using InputShapes = std::map<std::string, std::vector<int64_t>>;

/// The runtime inputs of a model that have a symbolic or unknown dim.
struct InputShapeRequest {
    QString path;
    std::vector<std::string> names;
    std::vector<std::vector<std::string>> dims;  // as declared: "3", "batch" or "?"
    /// Why the last answer did not open the model (shown in the dialog, which
    /// asks again); empty on the first question.
    QString error;
    /// The failed answer was the studio's own proposal (every symbolic dim
    /// 1, or the remembered shapes), not one the user gave.
    bool proposalFailed = false;
    bool empty() const { return names.empty(); }
};

/// What the user gave: shapes for the symbolic inputs, or an ONNX test-data
/// folder whose input_N.pb files give the shapes and, for inputs the import
/// needs the values of (an If on a sample rate), the values
/// (ModelDocument::loadForInputs).
struct InputChoice {
    InputShapes shapes;
    QString inputDir;
    bool empty() const { return shapes.empty() && inputDir.isEmpty(); }
};

/// Reads `path`'s inputs (the graph is not imported). Off the UI thread.
InputShapeRequest inputShapeRequest(const QString& path);

/// "1x3x224x224": the shape last given for this input of this model, else its
/// declared dims with every symbolic or unknown one set to 1.
QString proposedShape(const QString& path, const std::string& name,
                      const std::vector<std::string>& dims);

/// "x: batch×3×224×224": an input as the model declares it.
QString declaredShape(const std::string& name, const std::vector<std::string>& dims);

/// The input-file folder last given for this model (empty: shapes were).
QString rememberedInputDir(const QString& path);
void rememberInputDir(const QString& path, const QString& dir);

/// Parses "1x3x224x224" (or "1,3,224,224") into `shape`; false if it is not one.
bool parseShapeText(const QString& text, std::vector<int64_t>* shape);

/// Asks for every input of `request` in one dialog, or for a folder of input
/// files (or, when `suppressed`, takes the proposals or the remembered folder
/// without showing one; with `request.error`, nullopt at once),
/// and remembers the answer for the model. nullopt when the user cancels;
/// `error` says why an answer was refused.
std::optional<InputChoice> askInputShapes(QWidget* parent, const InputShapeRequest& request,
                                          bool suppressed, QString* error);

}  // namespace tessera::studio
