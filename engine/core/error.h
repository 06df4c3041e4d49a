// Two kinds of error: UserError for anything a user gave us (a model, a flag, a
// schedule step), InternalError for our own broken invariants.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace tessera {

/// Something the user gave us is wrong. The message names the file, node, op
/// or step and says what to do. Callers must leave prior state intact.
class UserError : public std::runtime_error {
public:
    explicit UserError(const std::string& msg) : std::runtime_error(msg) {}
};

/// An invariant of Tessera itself was broken: a bug in our code.
class InternalError : public std::logic_error {
public:
    explicit InternalError(const std::string& msg) : std::logic_error(msg) {}
};

namespace detail {
// Collects a streamed message and throws E from its destructor-like finish().
template <typename E>
class ErrorStream {
public:
    ErrorStream(const char* file, int line, const char* cond, bool internal) {
        if (internal) m_os << "internal error at " << file << ":" << line << ": check '" << cond << "' failed: ";
    }
    template <typename T>
    ErrorStream& operator<<(const T& v) {
        m_os << v;
        return *this;
    }
    [[noreturn]] void raise() const { throw E(m_os.str()); }

private:
    std::ostringstream m_os;
};

// Lets `TS_CHECK(c) << "msg";` throw at the end of the full expression.
struct Raiser {
    template <typename E>
    [[noreturn]] void operator&(const ErrorStream<E>& s) const { s.raise(); }
};
}  // namespace detail

}  // namespace tessera

/// Our own invariant: throws InternalError with the streamed message.
#define TS_CHECK(cond)                                                                        \
    if (cond) {                                                                               \
    } else                                                                                    \
        ::tessera::detail::Raiser{} &                                                         \
            ::tessera::detail::ErrorStream<::tessera::InternalError>(__FILE__, __LINE__, #cond, true)

/// Something the user gave us: throws UserError with the streamed message.
#define TS_USER_CHECK(cond)                                                                   \
    if (cond) {                                                                               \
    } else                                                                                    \
        ::tessera::detail::Raiser{} &                                                         \
            ::tessera::detail::ErrorStream<::tessera::UserError>(__FILE__, __LINE__, #cond, false)

#define TS_USER_FAIL() TS_USER_CHECK(false)
#define TS_FAIL() TS_CHECK(false)
