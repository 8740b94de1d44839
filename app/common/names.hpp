#pragma once
// Errors and name parsing shared by the session layer, the generators and the option parser.
#include "kernellab/error.hpp"

#include <QString>
#include <QStringList>

namespace kl::app {

/// Throws kl::InvalidArgument with `message` (what the CLI reports with exit code 2).
[[noreturn]] inline void fail(const QString& message) { throw InvalidArgument(message.toStdString()); }

/// The value of `all` whose toString() is `name`; kl::InvalidArgument naming `field`
/// and listing the valid names otherwise.
template <typename Enum, typename Values> Enum parseName(const QString& name, const Values& all, const QString& field)
{
    QStringList known;
    for (Enum value : all) {
        if (toString(value) == name) return value;
        known << toString(value);
    }
    fail(field + QStringLiteral(": '") + name + QStringLiteral("' is not one of ") + known.join(QStringLiteral(", ")));
}

} // namespace kl::app
