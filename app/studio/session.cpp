// Session <-> JSON with QJsonDocument; traces use the engine's Trace JSON.
#include "app/studio/session.h"

#include <QCryptographicHash>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

namespace tessera::studio {
namespace {

QJsonObject attrToJson(const graph::AttrValue& v) {
    QJsonObject o;
    if (auto* i = std::get_if<int64_t>(&v)) o["int"] = qint64(*i);
    if (auto* d = std::get_if<double>(&v)) o["float"] = *d;
    if (auto* s = std::get_if<std::string>(&v)) o["string"] = QString::fromStdString(*s);
    if (auto* is = std::get_if<std::vector<int64_t>>(&v)) {
        QJsonArray a;
        for (int64_t x : *is) a.append(qint64(x));
        o["ints"] = a;
    }
    if (auto* ds = std::get_if<std::vector<double>>(&v)) {
        QJsonArray a;
        for (double x : *ds) a.append(x);
        o["floats"] = a;
    }
    return o;
}

bool attrFromJson(const QJsonObject& o, graph::AttrValue* out) {
    if (o.contains("int")) *out = int64_t(o["int"].toInteger());
    else if (o.contains("float")) *out = o["float"].toDouble();
    else if (o.contains("string")) *out = o["string"].toString().toStdString();
    else if (o.contains("ints")) {
        std::vector<int64_t> v;
        for (const QJsonValue& x : o["ints"].toArray()) v.push_back(x.toInteger());
        *out = v;
    } else if (o.contains("floats")) {
        std::vector<double> v;
        for (const QJsonValue& x : o["floats"].toArray()) v.push_back(x.toDouble());
        *out = v;
    } else {
        return false;
    }
    return true;
}

}  // namespace

QByteArray Session::toJson() const {
    QJsonObject root;
    root["format"] = "tessera-session";
    root["version"] = 1;
    root["model"] = QJsonObject{{"path", modelPath}, {"sha256", modelSha256}};
    QJsonArray editList;
    for (const graph::GraphEdit& e : edits) {
        QJsonObject o{{"kind", graph::edit_kind_name(e.kind)},
                      {"target", QString::fromStdString(e.target)}};
        if (!e.key.empty()) o["key"] = QString::fromStdString(e.key);
        if (e.kind == graph::GraphEdit::Kind::SetAttribute) o["value"] = attrToJson(e.value);
        if (e.kind == graph::GraphEdit::Kind::InsertAfter) {
            o["name"] = QString::fromStdString(e.name);
            QJsonObject attrs;
            for (const auto& [key, value] : e.attrs) attrs[QString::fromStdString(key)] = attrToJson(value);
            o["attrs"] = attrs;
        }
        if (e.kind == graph::GraphEdit::Kind::SetInputShape) {
            QJsonArray shape;
            for (int64_t d : e.shape) shape.append(qint64(d));
            o["shape"] = shape;
        }
        editList.append(o);
    }
    root["edits"] = editList;
    root["pipeline"] = QJsonArray::fromStringList(pipeline);
    root["target"] = target;
    root["tuning_db"] = tuningDb;
    root["opt_level"] = optLevel;
    root["threads"] = threads;
    QJsonObject traceMap;
    for (auto it = traces.constBegin(); it != traces.constEnd(); ++it) {
        schedule::Trace t;
        t.target = target.toStdString();
        t.steps = it.value();
        traceMap[it.key()] = QJsonDocument::fromJson(QByteArray::fromStdString(t.to_json())).object();
    }
    root["traces"] = traceMap;
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

bool Session::fromJson(const QByteArray& json, const QString& origin, Session* out, QString* error) {
    QJsonParseError parse;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parse);
    if (doc.isNull() || !doc.isObject()) {
        *error = origin + ": not a JSON object (" + parse.errorString() + ")";
        return false;
    }
    const QJsonObject root = doc.object();
    if (root["format"].toString() != "tessera-session") {
        *error = origin + ": not a Tessera session (\"format\" must be \"tessera-session\")";
        return false;
    }
    Session s;
    s.modelPath = root["model"].toObject()["path"].toString();
    s.modelSha256 = root["model"].toObject()["sha256"].toString();
    const QJsonArray editList = root["edits"].toArray();
    for (int i = 0; i < editList.size(); ++i) {
        const QJsonObject o = editList[i].toObject();
        graph::GraphEdit e;
        try {
            e.kind = graph::edit_kind_from_name(o["kind"].toString().toStdString());
        } catch (const std::exception& ex) {
            *error = QString("%1: edit %2: %3").arg(origin).arg(i + 1).arg(ex.what());
            return false;
        }
        e.target = o["target"].toString().toStdString();
        e.key = o["key"].toString().toStdString();
        if (e.kind == graph::GraphEdit::Kind::SetAttribute && !attrFromJson(o["value"].toObject(), &e.value)) {
            *error = QString("%1: edit %2: \"value\" needs int, float, string, ints or floats")
                         .arg(origin)
                         .arg(i + 1);
            return false;
        }
        for (const QJsonValue& d : o["shape"].toArray()) e.shape.push_back(d.toInteger());
        e.name = o["name"].toString().toStdString();
        const QJsonObject attrs = o["attrs"].toObject();
        for (auto it = attrs.constBegin(); it != attrs.constEnd(); ++it) {
            graph::AttrValue value;
            if (!attrFromJson(it.value().toObject(), &value)) {
                *error = QString("%1: edit %2: attribute \"%3\" needs int, float, string, ints or floats")
                             .arg(origin)
                             .arg(i + 1)
                             .arg(it.key());
                return false;
            }
            e.attrs[it.key().toStdString()] = value;
        }
        s.edits.push_back(e);
    }
    for (const QJsonValue& p : root["pipeline"].toArray()) s.pipeline << p.toString();
    s.target = root["target"].toString("llvm");
    s.tuningDb = root["tuning_db"].toString();
    s.optLevel = root["opt_level"].toInt(2);
    s.threads = root["threads"].toInt(0);
    if (s.optLevel < 0 || s.optLevel > 3 || s.threads < 0 || s.threads > 4096) {
        *error = QString("%1: \"opt_level\" must be 0..3 and \"threads\" 0..4096, got %2 and %3")
                     .arg(origin)
                     .arg(s.optLevel)
                     .arg(s.threads);
        return false;
    }
    const QJsonObject traceMap = root["traces"].toObject();
    for (auto it = traceMap.constBegin(); it != traceMap.constEnd(); ++it) {
        try {
            const schedule::Trace t = schedule::Trace::from_json(
                QJsonDocument(it.value().toObject()).toJson().toStdString(),
                (origin + ": trace of " + it.key()).toStdString());
            s.traces[it.key()] = t.steps;
        } catch (const std::exception& ex) {
            *error = QString::fromStdString(ex.what());
            return false;
        }
    }
    *out = s;
    return true;
}

bool Session::save(const QString& path, QString* error) const {
    QSaveFile file(path);  // written whole or not at all (a crash mid-save keeps the old one)
    if (!file.open(QIODevice::WriteOnly) || file.write(toJson()) < 0 || !file.commit()) {
        *error = path + ": cannot write: " + file.errorString();
        return false;
    }
    return true;
}

bool Session::load(const QString& path, Session* out, QString* error) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = path + ": cannot read: " + file.errorString();
        return false;
    }
    return fromJson(file.readAll(), path, out, error);
}

QString fileSha256(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {};
    QCryptographicHash hash(QCryptographicHash::Sha256);
    hash.addData(&file);
    return QString::fromLatin1(hash.result().toHex());
}

}  // namespace tessera::studio
