/* SPDX-License-Identifier: BSD-3-Clause */
/* The PARMACS programs' numeric options (-n 258, -w 1.5). atol and atof took "1x" as 1 and
 * "abc" as 0, so a mistyped option ran another problem than the one asked for, and said
 * nothing. Each reader takes the whole text or ends the program with one line naming the
 * option and the text; the program then checks the value's range as before. Every refusal of
 * the command line (an option getopt does not know, a malformed number, a value out of range)
 * ends the program with status OPTION_REFUSED, 2, as every other program of the project ends
 * on a command-line error: a script tells a misuse from a failed run. Plain C,
 * included by the .C files as it is (not through m4); the directory of the .C files is on
 * the include path (squall_parmacs_program, and bench/parmacs for the pthreads builds). */
#ifndef SQUALL_APPS_PARMACS_OPTIONS_H
#define SQUALL_APPS_PARMACS_OPTIONS_H

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define OPTION_REFUSED 2

static inline void option_refused(const char *program, int flag, const char *text, const char *what)
{
  fprintf(stderr, "%s: -%c must be %s (got '%s')\n", program, flag, what, text);
  exit(OPTION_REFUSED);
}

/* A whole number that fits a long: digits after an optional sign, nothing before or after. */
static inline long option_long(const char *program, int flag, const char *text)
{
  char *end;
  long value;
  errno = 0;
  value = strtol(text, &end, 10);
  if (end == text || *end != '\0' || isspace((unsigned char) text[0]) || errno == ERANGE)
    option_refused(program, flag, text, "a whole number");
  return value;
}

/* After the getopt loop: an argument that is not an option ("parmacs_sor 100" for -n 100) is
 * refused, named as getopt names an option it does not know (after argv[0]). getopt moves such
 * arguments to the end, and the program ran the defaults, saying nothing. */
static inline void option_no_operands(int argc, char *const argv[], int first)
{
  if (first < argc) {
    fprintf(stderr, "%s: unexpected argument '%s' (options are -x value; -h lists them)\n", argv[0], argv[first]);
    exit(OPTION_REFUSED);
  }
}

/* A finite number as strtod reads it (1.5, 15e-1), but not "nan" or "inf". */
static inline double option_double(const char *program, int flag, const char *text)
{
  char *end;
  double value;
  errno = 0;
  value = strtod(text, &end);
  if (end == text || *end != '\0' || isspace((unsigned char) text[0]) || errno == ERANGE || !isfinite(value))
    option_refused(program, flag, text, "a number");
  return value;
}

#endif
