#pragma once
// CSV fields as every CSV file KernelLab writes quotes them (RFC 4180): the run report,
// the bench and sweep tables, the histogram output.
#include <QString>

namespace kl::app {

/// `text` as one CSV field: in double quotes, its own quotes doubled, when it holds a comma,
/// a quote or a line break; as it is otherwise.
QString csvField(const QString& text);

} // namespace kl::app
