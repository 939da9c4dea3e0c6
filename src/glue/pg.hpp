// The base of every glue file: the core's types that the glue's headers name, PostgreSQL's
// headers (after every C++ header: port.h redefines snprintf, c.h defines Min and Max), and
// the wrapper that keeps C++ exceptions out of the server. A glue file includes a core header
// of its own (foreign_codec.hpp, ulid_codec.hpp, ...) before any glue header: a core header
// read after postgres.h stops the build (src/core/pg_free.hpp).
#pragma once

#include "core/chacha.hpp"
#include "core/generator.hpp"
#include "core/issue_loop.hpp"
#include "core/shared_state.hpp"
#include "core/tsc_clock.hpp"

#include <cstdint>
#include <cstring>
#include <ctime>
#include <exception>

// The module is built with hidden visibility: only what the server looks up by name (the
// SQL-callable functions, their info records, the magic block, _PG_init) is exported, as
// PostgreSQL 16's build does for modules; the rest is reached without the GOT.
#ifndef PGDLLEXPORT
#define PGDLLEXPORT __attribute__((visibility("default")))
#endif

extern "C" {
#include "postgres.h"

#include "glue/pg_compat.hpp"

#include "fmgr.h"
}

namespace snowflake::glue {

// The message of the C++ exception being turned into an ERROR, kept outside the function's
// frame, so that no call reserves a buffer for it on its stack (module.cpp).
void keep_exception_message(const char *what) noexcept;
[[noreturn]] void raise_cxx_exception(const char *function);

}  // namespace snowflake::glue

// Defines an SQL-callable function whose body is C++: every exception is caught, the catch
// block is left, and only then is the PostgreSQL ERROR raised, so that the error's longjmp
// never crosses a C++ frame that still owns an object.
#define SNOWFLAKE_FUNCTION(name)                                        \
  static Datum name##_impl([[maybe_unused]] FunctionCallInfo fcinfo);   \
  extern "C" {                                                          \
  PG_FUNCTION_INFO_V1(name);                                            \
  PGDLLEXPORT Datum name(PG_FUNCTION_ARGS) {                            \
    try {                                                               \
      return name##_impl(fcinfo);                                       \
    } catch (const std::exception &e) {                                 \
      snowflake::glue::keep_exception_message(e.what());                \
    } catch (...) {                                                     \
      snowflake::glue::keep_exception_message("unknown C++ exception"); \
    }                                                                   \
    snowflake::glue::raise_cxx_exception(#name);                        \
  }                                                                     \
  }                                                                     \
  static Datum name##_impl([[maybe_unused]] FunctionCallInfo fcinfo)
