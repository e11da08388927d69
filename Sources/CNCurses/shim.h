#ifndef SUBDESK_CNCURSES_SHIM_H
#define SUBDESK_CNCURSES_SHIM_H
#define _XOPEN_SOURCE_EXTENDED 1
#define NCURSES_WIDECHAR 1
#include <locale.h>
#include <wchar.h>
#include <ncursesw/curses.h>

int wcwidth(wchar_t c);

static inline WINDOW *subdesk_stdscr(void) { return stdscr; }
static inline int subdesk_lines(void) { return LINES; }
static inline int subdesk_cols(void) { return COLS; }
static inline int subdesk_maxy(WINDOW *w) { int y, x; getmaxyx(w, y, x); (void)x; return y; }
static inline int subdesk_maxx(WINDOW *w) { int y, x; getmaxyx(w, y, x); (void)y; return x; }
static inline attr_t subdesk_a_bold(void) { return A_BOLD; }
static inline attr_t subdesk_a_dim(void) { return A_DIM; }
static inline attr_t subdesk_a_reverse(void) { return A_REVERSE; }
static inline attr_t subdesk_a_underline(void) { return A_UNDERLINE; }
static inline attr_t subdesk_a_normal(void) { return A_NORMAL; }
static inline attr_t subdesk_color_pair(int n) { return COLOR_PAIR(n); }
static inline int subdesk_key_resize(void) { return KEY_RESIZE; }
static inline int subdesk_key_f(int n) { return KEY_F(n); }
#endif
