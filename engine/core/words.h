#pragma once
// Values from specs, flags and paths that other programs read as words: names that become a
// path component, values written into generated scripts. One rule each, checked where the value
// enters, and one way to write a value as a word of the language that reads it.
//
// - Names (a sweep's name: results/runs/<name>/, results/sweeps/<name>.yaml, the SLURM job
//   mavg-<name>): 1 to kMaxNameLength characters of letters, digits, '_', '.', '-' and '+', the
//   first a letter, a digit or '_' (so never '.', '..', a hidden file or an option).
// - Names of sweeps that already exist (retry, the launcher of a stored sweep): a sweep made by
//   an earlier build may have a name outside today's rule; it is taken as long as it is one
//   path component (1 to 255 bytes, no '/', not '.' or '..') without a control character.
// - Script values: no control character (below 0x20, or 0x7f). A newline would start a new
//   shell line; any other blank a C `isspace()` splits at (tab, vertical tab, form feed,
//   carriage return) would make two words where mavg checked one.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace mavg {

inline constexpr size_t kMaxNameLength = 100;

// "" when `name` follows the name rule; else why not.
std::string NameProblem(std::string_view name);
// Throws "<what> '<name>' is not a valid name: <why>" (the name shown escaped) unless it is.
void CheckName(std::string_view what, std::string_view name);

// `s` as one line: control characters as \n, \t, \xNN; at most `max` characters, then "...".
std::string Printable(std::string_view s, size_t max = 120);

// The weaker rule for a name that already exists: throws "<what> '<name>' cannot name a
// directory: <why>" unless it is one path component without a control character.
void CheckExistingName(std::string_view what, std::string_view name);

bool HasControlCharacter(std::string_view s);
// Throws "<what> '<value>' holds a control character (<which>), which ..." if it does.
void CheckNoControlCharacter(std::string_view what, std::string_view value);

// "a, b,,c " -> {"a", "b", "", "c"}: `list` split at `separator`, each item's blanks (spaces and
// tabs) at either end taken off; empty items are kept (the caller decides what one means).
std::vector<std::string> SplitTrimmed(std::string_view list, char separator = ',');

// One bash word: single-quoted ('...' with ' written as '\'').
std::string ShellWord(std::string_view s);
// One argument of an #SBATCH line as sbatch reads it (blanks split arguments outside quotes, a
// backslash makes the next character literal, an unescaped # ends the line): every blank,
// backslash, quote and # escaped with a backslash. `s` must hold no control character.
std::string SbatchWord(std::string_view s);

}  // namespace mavg
