// DataType spelling and parsing.
#include "engine/tir/dtype.h"

#include "engine/core/error.h"

namespace tessera::tir {

std::string DataType::str() const {
    std::string s;
    switch (code) {
        case Int: s = "int" + std::to_string(bits); break;
        case UInt: s = "uint" + std::to_string(bits); break;
        case Float: s = "float" + std::to_string(bits); break;
        case Bool: s = "bool"; break;
        case Handle: s = "handle"; break;
    }
    if (lanes > 1) s += "x" + std::to_string(lanes);
    return s;
}

DataType DataType::parse(const std::string& text) {
    std::string s = text;
    int lanes = 1;
    if (auto x = s.find('x'); x != std::string::npos) {
        lanes = std::stoi(s.substr(x + 1));
        s = s.substr(0, x);
    }
    auto num = [&](size_t from) { return uint8_t(std::stoi(s.substr(from))); };
    try {
        if (s == "bool") return boolean(lanes);
        if (s == "handle") return handle();
        if (s.rfind("float", 0) == 0) return {Float, num(5), uint16_t(lanes)};
        if (s.rfind("uint", 0) == 0) return {UInt, num(4), uint16_t(lanes)};
        if (s.rfind("int", 0) == 0) return {Int, num(3), uint16_t(lanes)};
    } catch (const std::exception&) {
    }
    TS_USER_FAIL() << "unknown data type '" << text << "'";
}

}  // namespace tessera::tir
