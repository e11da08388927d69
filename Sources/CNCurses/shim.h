#ifndef SUBDESK_CNCURSES_SHIM_H
#define SUBDESK_CNCURSES_SHIM_H
#define _XOPEN_SOURCE_EXTENDED 1
#define NCURSES_WIDECHAR 1
#include <locale.h>
#include <wchar.h>
#include <ncursesw/curses.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

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
static inline int subdesk_key_code_yes(void) { return KEY_CODE_YES; }
static inline int subdesk_colors(void) { return COLORS; }
static inline int subdesk_color_pairs(void) { return COLOR_PAIRS; }

/* Draws n wide characters at (y, x) in one attribute and colour pair. */
static inline int subdesk_paint(WINDOW *w, int y, int x, const wchar_t *text, int n, attr_t attrs, short pair) {
    wattr_set(w, attrs, pair, NULL);
    return mvwaddnwstr(w, y, x, text, n);
}

/* SIGINT and SIGTERM only set a flag: the main loop notices it (wget_wch returns on a
   signal or within its timeout) and leaves through the same path as `q`, restoring the
   terminal. Use both functions from one Swift file, so they share this static. */
static volatile sig_atomic_t subdesk_caught_signal = 0;
static void subdesk_note_signal(int sig) { subdesk_caught_signal = sig; }
static inline void subdesk_catch_quit_signals(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = subdesk_note_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGHUP, &action, NULL);
}
static inline int subdesk_take_signal(void) {
    int sig = subdesk_caught_signal;
    subdesk_caught_signal = 0;
    return sig;
}

/* For exits that skip the main loop's cleanup: leave the terminal usable. */
static void subdesk_endwin_if_needed(void) { if (!isendwin()) endwin(); }
static inline void subdesk_restore_at_exit(void) { atexit(subdesk_endwin_if_needed); }
#endif
