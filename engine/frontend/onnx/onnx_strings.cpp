// ONNX StringNormalizer and TfIdfVectorizer, evaluated at import on constant
// inputs (the graph IR has no string dtype; string tensors live in
// Importer::strings). A non-constant input is a UserError.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

namespace {

std::string ascii_lower(std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string ascii_upper(std::string s) {
    for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

std::vector<std::string> attr_strings(const NodeCtx& ctx, const std::string& key) {
    for (const auto& a : ctx.node.attribute())
        if (a.name() == key) return {a.strings().begin(), a.strings().end()};
    return {};
}

void convert_string_normalizer(NodeCtx& ctx) {
    ctx.expect_outputs(1);
    TS_USER_CHECK(ctx.has_input(0)) << ctx.where() << ": missing input 0";
    auto it = ctx.imp.strings.find(ctx.node.input(0));
    TS_USER_CHECK(it != ctx.imp.strings.end())
        << ctx.where() << ": input '" << ctx.node.input(0)
        << "' must be a constant string tensor (Tessera evaluates string ops at import; freeze "
           "it or give it as an initializer)";
    const StringTensor& x = it->second;
    const bool two_d = x.shape.size() == 2;
    TS_USER_CHECK(x.shape.size() == 1 || (two_d && x.shape[0] == 1))
        << ctx.where() << ": input must have shape [C] or [1, C]";
    const std::string action = ctx.attr_str("case_change_action", "NONE");
    TS_USER_CHECK(action == "NONE" || action == "LOWER" || action == "UPPER")
        << ctx.where() << ": case_change_action '" << action << "' is not NONE, LOWER or UPPER";
    const bool sensitive = ctx.attr_int("is_case_sensitive", 0) != 0;
    std::set<std::string> stop;
    for (const auto& w : attr_strings(ctx, "stopwords")) stop.insert(sensitive ? w : ascii_lower(w));
    StringTensor y;
    for (const auto& s : x.data) {
        if (stop.count(sensitive ? s : ascii_lower(s))) continue;
        y.data.push_back(action == "LOWER" ? ascii_lower(s) : action == "UPPER" ? ascii_upper(s) : s);
    }
    if (y.data.empty()) y.data.push_back("");  // ONNX gives one empty string, not an empty tensor
    y.shape = two_d ? std::vector<int64_t>{1, int64_t(y.data.size())}
                    : std::vector<int64_t>{int64_t(y.data.size())};
    const std::string& out = ctx.node.output(0);
    TS_USER_CHECK(!is_defined(ctx.imp, out)) << ctx.where() << ": output '" << out
                                             << "' is defined twice";
    ctx.imp.strings[out] = std::move(y);
}

// Counts n-grams of token rows against the pool, as the ONNX spec describes:
// for each start, each gram length in [min, max] and each skip in
// [0, max_skip] (unigrams once), the tokens start, start+skip+1, ...
template <typename Token>
std::vector<float> tfidf(NodeCtx& ctx, const std::vector<Token>& tokens, int64_t rows,
                         int64_t cols) {
    const int64_t min_n = ctx.attr_int("min_gram_length", 1);
    const int64_t max_n = ctx.attr_int("max_gram_length", 1);
    const int64_t max_skip = ctx.attr_int("max_skip_count", 0);
    const std::string mode = ctx.attr_str("mode", "TF");
    const std::vector<int64_t> counts = ctx.attr_ints("ngram_counts");
    const std::vector<int64_t> indexes = ctx.attr_ints("ngram_indexes");
    const std::vector<int64_t> pool = ctx.attr_ints("pool_int64s");
    TS_USER_CHECK(!ctx.has_attr("pool_strings"))
        << ctx.where() << ": pool_strings is not supported (only integer tokens)";
    TS_USER_CHECK(min_n >= 1 && max_n >= min_n && max_skip >= 0)
        << ctx.where() << ": bad gram lengths or skip count";
    TS_USER_CHECK(mode == "TF" || mode == "IDF" || mode == "TFIDF")
        << ctx.where() << ": mode '" << mode << "' is not TF, IDF or TFIDF";
    TS_USER_CHECK(int64_t(counts.size()) >= max_n)
        << ctx.where() << ": ngram_counts needs an entry per gram length up to " << max_n;
    std::vector<double> weights;
    if (ctx.has_attr("weights")) {
        for (const auto& a : ctx.node.attribute())
            if (a.name() == "weights") weights.assign(a.floats().begin(), a.floats().end());
    }
    int64_t width = 0;
    for (int64_t i : indexes) width = std::max(width, i + 1);
    // Gram (as a token list) -> its output column, per length.
    std::vector<std::map<std::vector<int64_t>, int64_t>> grams(size_t(max_n + 1));
    int64_t gram_index = 0;
    for (int64_t n = 1; n <= int64_t(counts.size()); ++n) {
        int64_t begin = counts[size_t(n - 1)];
        int64_t end = n < int64_t(counts.size()) ? counts[size_t(n)] : int64_t(pool.size());
        TS_USER_CHECK(begin >= 0 && begin <= end && end <= int64_t(pool.size()) &&
                      (end - begin) % n == 0)
            << ctx.where() << ": ngram_counts do not divide pool_int64s into " << n << "-grams";
        for (int64_t p = begin; p < end; p += n, ++gram_index) {
            TS_USER_CHECK(gram_index < int64_t(indexes.size()))
                << ctx.where() << ": ngram_indexes is shorter than the pool";
            if (n <= max_n)
                grams[size_t(n)][std::vector<int64_t>(pool.begin() + p, pool.begin() + p + n)] =
                    indexes[size_t(gram_index)];
        }
    }
    std::vector<float> out(size_t(rows * width), 0.0f);
    for (int64_t r = 0; r < rows; ++r) {
        const Token* row = tokens.data() + r * cols;
        std::vector<double> cnt(size_t(width), 0.0);
        for (int64_t s = 0; s < cols; ++s) {
            for (int64_t n = min_n; n <= max_n; ++n) {
                for (int64_t skip = 0; skip <= (n == 1 ? 0 : max_skip); ++skip) {
                    int64_t last = s + (n - 1) * (skip + 1);
                    if (last >= cols) break;
                    std::vector<int64_t> g;
                    for (int64_t k = 0; k < n; ++k) g.push_back(int64_t(row[s + k * (skip + 1)]));
                    auto hit = grams[size_t(n)].find(g);
                    if (hit != grams[size_t(n)].end()) cnt[size_t(hit->second)] += 1;
                }
            }
        }
        for (int64_t c = 0; c < width; ++c) {
            double w = size_t(c) < weights.size() ? weights[size_t(c)] : 1.0;
            double v = cnt[size_t(c)];
            if (mode == "IDF") v = v > 0 ? w : 0;
            if (mode == "TFIDF") v *= w;
            out[size_t(r * width + c)] = float(v);
        }
    }
    return out;
}

void convert_tfidf_vectorizer(NodeCtx& ctx) {
    ctx.expect_outputs(1);
    const ConstTensor* x = ctx.constant_input(0);
    TS_USER_CHECK(x != nullptr) << ctx.where() << ": input '"
                                << (ctx.has_input(0) ? ctx.node.input(0) : "")
                                << "' must be a constant (Tessera evaluates TfIdfVectorizer at "
                                   "import; freeze it or give it as an initializer)";
    const auto& shape = x->type.shape;
    TS_USER_CHECK(shape.size() == 1 || shape.size() == 2)
        << ctx.where() << ": input must have rank 1 or 2";
    const int64_t rows = shape.size() == 2 ? shape[0] : 1;
    const int64_t cols = shape.back();
    std::vector<float> y;
    std::vector<int64_t> ints = ctx.constant_ints(0);
    y = tfidf(ctx, ints, rows, cols);
    const int64_t width = rows > 0 ? int64_t(y.size()) / rows : 0;
    auto data = std::make_shared<graph::ConstantData>();
    data->bytes.resize(y.size() * sizeof(float));
    std::copy_n(reinterpret_cast<const uint8_t*>(y.data()), data->bytes.size(), data->bytes.data());
    graph::TensorType t{graph::DType::Float32,
                        shape.size() == 2 ? std::vector<int64_t>{rows, width}
                                          : std::vector<int64_t>{width}};
    ctx.define_constant({t, data});
}

// Numeric constant of dtype `to` parsed from strings (Cast from STRING).
ConstTensor parse_strings(NodeCtx& ctx, const StringTensor& x, graph::DType to) {
    graph::TensorType type{to, x.shape};
    auto data = std::make_shared<graph::ConstantData>();
    data->bytes.resize(size_t(type.num_bytes()));
    for (size_t i = 0; i < x.data.size(); ++i) {
        const char* str = x.data[i].c_str();
        char* end = nullptr;
        double v = std::strtod(str, &end);  // also "NaN", "INF", "+INF", "-INF"
        TS_USER_CHECK(end != str && *end == '\0')
            << ctx.where() << ": '" << x.data[i] << "' is not a number";
        uint8_t* dst = data->bytes.data() + i * size_t(graph::dtype_bytes(to));
        switch (to) {
            case graph::DType::Float32: { float f = float(v); std::memcpy(dst, &f, 4); break; }
            case graph::DType::Float64: std::memcpy(dst, &v, 8); break;
            case graph::DType::Int64: { int64_t k = int64_t(v); std::memcpy(dst, &k, 8); break; }
            case graph::DType::Int32: { int32_t k = int32_t(v); std::memcpy(dst, &k, 4); break; }
            case graph::DType::Int8: *dst = uint8_t(int8_t(v)); break;
            case graph::DType::UInt8: *dst = uint8_t(v); break;
            case graph::DType::Bool: *dst = v != 0; break;
        }
    }
    return {type, data};
}

// Strings of a constant numeric tensor: the shortest text that reads back
// exactly (numpy's str of float32 / float64), integers in decimal.
StringTensor format_tensor(const ConstTensor& c) {
    StringTensor s;
    s.shape = c.type.shape;
    const int64_t n = c.type.num_elements();
    for (int64_t i = 0; i < n; ++i) {
        char buf[64];
        char* end = buf;
        switch (c.type.dtype) {
            case graph::DType::Float32: end = std::to_chars(buf, buf + 64, c.data->as<float>()[i]).ptr; break;
            case graph::DType::Float64: end = std::to_chars(buf, buf + 64, c.data->as<double>()[i]).ptr; break;
            case graph::DType::Int64: end = std::to_chars(buf, buf + 64, c.data->as<int64_t>()[i]).ptr; break;
            case graph::DType::Int32: end = std::to_chars(buf, buf + 64, c.data->as<int32_t>()[i]).ptr; break;
            case graph::DType::Int8: end = std::to_chars(buf, buf + 64, int(c.data->as<int8_t>()[i])).ptr; break;
            case graph::DType::UInt8: end = std::to_chars(buf, buf + 64, int(c.data->as<uint8_t>()[i])).ptr; break;
            case graph::DType::Bool: end = std::strcpy(buf, c.data->bytes[size_t(i)] ? "True" : "False") + std::strlen(buf); break;
        }
        s.data.emplace_back(buf, end);
    }
    return s;
}

// Cast to or from STRING at import; `to` is the target ONNX element type.
// Returns false when neither side is a string (the tensor converter's case).
bool cast_strings(NodeCtx& ctx, int to) {
    const bool from_string = ctx.has_input(0) && ctx.imp.strings.count(ctx.node.input(0));
    if (!from_string && to != onnx::TensorProto_DataType_STRING) return false;
    ctx.expect_outputs(1);
    const std::string& out = ctx.node.output(0);
    if (from_string && to == onnx::TensorProto_DataType_STRING) {
        alias_name(ctx.imp, out, ctx.node.input(0), ctx.where());
        return true;
    }
    if (from_string) {
        const StringTensor x = ctx.imp.strings.at(ctx.node.input(0));
        ctx.define_constant(parse_strings(ctx, x, dtype_from_onnx(to, ctx.where())));
        return true;
    }
    const ConstTensor* c = ctx.constant_input(0);
    TS_USER_CHECK(c != nullptr) << ctx.where() << ": a cast to STRING needs a constant input ('"
                                << (ctx.has_input(0) ? ctx.node.input(0) : "")
                                << "'): Tessera evaluates string ops at import";
    TS_USER_CHECK(!is_defined(ctx.imp, out)) << ctx.where() << ": output '" << out
                                             << "' is defined twice";
    ctx.imp.strings[out] = format_tensor(*c);
    return true;
}

}  // namespace

void add_string_converters(ConverterTable& t) {
    t["StringNormalizer"] = convert_string_normalizer;
    t["TfIdfVectorizer"] = convert_tfidf_vectorizer;
    // Casts to and from STRING run at import; others go to the tensor converters.
    Converter cast = t.count("Cast") ? t["Cast"] : Converter();
    t["Cast"] = [cast](NodeCtx& ctx) {
        if (cast_strings(ctx, int(ctx.attr_int("to", 0)))) return;
        TS_USER_CHECK(bool(cast)) << ctx.where() << ": unsupported op Cast";
        cast(ctx);
    };
    Converter cast_like = t.count("CastLike") ? t["CastLike"] : Converter();
    t["CastLike"] = [cast_like](NodeCtx& ctx) {
        int to = 0;
        if (ctx.has_input(1)) {
            const std::string& like = ctx.node.input(1);
            if (ctx.imp.strings.count(like)) {
                to = onnx::TensorProto_DataType_STRING;
            } else if (ctx.imp.strings.count(ctx.node.input(0))) {
                to = dtype_to_onnx(ctx.input_type(1).dtype);
            }
        }
        if (to != 0 && cast_strings(ctx, to)) return;
        TS_USER_CHECK(bool(cast_like)) << ctx.where() << ": unsupported op CastLike";
        cast_like(ctx);
    };
}

}  // namespace tessera::frontend::onnx_import
