#include "csv.hpp"

#include <algorithm>

namespace kl::app {

QString csvField(const QString& text)
{
    static const QString special = QStringLiteral(",\"\n\r");
    if (std::none_of(text.begin(), text.end(), [](QChar c) { return special.contains(c); })) return text;
    return QLatin1Char('"') + QString(text).replace(QLatin1Char('"'), QStringLiteral("\"\"")) + QLatin1Char('"');
}

} // namespace kl::app
