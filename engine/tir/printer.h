// TVMScript-like text of loop IR, the text the studio shows.
#pragma once

#include <string>

#include "engine/tir/stmt.h"

namespace tessera::tir {

std::string print(const Expr& e);
std::string print(const Stmt& s, int indent = 0);
std::string print(const PrimFunc& f);

}  // namespace tessera::tir
