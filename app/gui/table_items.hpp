#pragma once
// The read-only tables of the result panels (timings, thread scaling, roofline), made one way.
#include <QString>
#include <QStringList>

class QTableWidget;
class QTableWidgetItem;

namespace kl::gui {

/// A read-only cell; numbers right-aligned.
QTableWidgetItem* tableCell(const QString& text, bool number = true);
/// A table with these column headers, sized to its contents, no row numbers, whole-row selection.
QTableWidget* newResultTable(const QStringList& headers);

} // namespace kl::gui
