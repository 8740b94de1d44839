#pragma once
// Building blocks of the run report (report.cpp) that the CLI's batch and bench reports share. The
// report itself is declared in session.hpp (toJson, toCsv, csvColumns); its CSV fields in csv.hpp.
#include <QJsonValue>
#include <QString>

namespace kl::app {

/// `text` as a JSON string; null when it is empty (no error, no file).
QJsonValue textOrNull(const QString& text);

} // namespace kl::app
