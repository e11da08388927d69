#include "CTestKitStart.h"

// Defined in Swift by SubdeskTestKit (@_cdecl): it registers the observer that knows which
// test is running, so that a store opened through the test kit is checked against the
// test's marking from the very first test on, and the engine pass can list what it runs.
// XCTest on Linux has no principal class to do this; a loader constructor is the one hook
// that runs before the first test. Only the test binary links this target.
extern void subdesk_test_kit_start(void);

__attribute__((constructor)) static void start_test_kit(void) {
    subdesk_test_kit_start();
}
