// dpx: the headless command line of DP Explorer (see app/cli/cli.h).
#include <QCoreApplication>
#include <iostream>

#include "cli.h"

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  QCoreApplication::setApplicationName(QStringLiteral("dpx"));
  return dpx::cli::run(QCoreApplication::arguments(), std::cout, std::cerr);
}
