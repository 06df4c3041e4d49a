// main() of the GUI tests: one QApplication (offscreen unless told otherwise) for all tests.
#include <gtest/gtest.h>

#include <QApplication>
#include <QStandardPaths>

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    // Settings, recent files and autosaves of the tests stay out of the user's.
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setOrganizationName("TesseraTests");
    QApplication::setApplicationName("tessera-studio-tests");
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
