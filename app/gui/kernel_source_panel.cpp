#include "kernel_source_panel.hpp"

#include "kernellab/error.hpp"
#include "kernellab/gpu/user_kernel.hpp"

#include <QAction>
#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QPainter>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QSplitter>
#include <QTextBlock>
#include <QToolButton>
#include <QVBoxLayout>

namespace kl::gui {

namespace {

class LineNumberArea : public QWidget {
public:
    explicit LineNumberArea(CodeEditor* editor) : QWidget(editor), editor_(editor) {}
    [[nodiscard]] QSize sizeHint() const override { return {editor_->lineNumberAreaWidth(), 0}; }

protected:
    void paintEvent(QPaintEvent* event) override { editor_->paintLineNumbers(event); }

private:
    CodeEditor* editor_;
};

QString dimensionsText(int x, int y) { return y == 1 ? QString::number(x) : QStringLiteral("%1x%2").arg(x).arg(y); }

} // namespace

CodeEditor::CodeEditor(QWidget* parent) : QPlainTextEdit(parent), lineNumbers_(new LineNumberArea(this))
{
    QFont mono(QStringLiteral("monospace"));
    mono.setStyleHint(QFont::TypeWriter);
    setFont(mono);
    setLineWrapMode(QPlainTextEdit::NoWrap);
    setTabStopDistance(4 * fontMetrics().horizontalAdvance(QLatin1Char(' ')));
    connect(this, &QPlainTextEdit::blockCountChanged, this, [this] { setViewportMargins(lineNumberAreaWidth(), 0, 0, 0); });
    connect(this, &QPlainTextEdit::updateRequest, this, [this](const QRect& rect, int dy) {
        if (dy) lineNumbers_->scroll(0, dy);
        else lineNumbers_->update(0, rect.y(), lineNumbers_->width(), rect.height());
    });
    connect(this, &QPlainTextEdit::cursorPositionChanged, this, [this] {
        QTextEdit::ExtraSelection line;
        line.format.setBackground(palette().alternateBase());
        line.format.setProperty(QTextFormat::FullWidthSelection, true);
        line.cursor = textCursor();
        line.cursor.clearSelection();
        setExtraSelections({line});
    });
    setViewportMargins(lineNumberAreaWidth(), 0, 0, 0);
}

int CodeEditor::lineNumberAreaWidth() const
{
    const int digits = QString::number(std::max(1, blockCount())).size();
    return 8 + fontMetrics().horizontalAdvance(QLatin1Char('9')) * std::max(3, digits);
}

void CodeEditor::resizeEvent(QResizeEvent* event)
{
    QPlainTextEdit::resizeEvent(event);
    const QRect r = contentsRect();
    lineNumbers_->setGeometry(QRect(r.left(), r.top(), lineNumberAreaWidth(), r.height()));
}

void CodeEditor::paintLineNumbers(QPaintEvent* event)
{
    QPainter painter(lineNumbers_);
    painter.fillRect(event->rect(), palette().window());
    painter.setPen(palette().color(QPalette::PlaceholderText));
    QTextBlock block = firstVisibleBlock();
    int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
    while (block.isValid() && top <= event->rect().bottom()) {
        const int height = qRound(blockBoundingRect(block).height());
        if (block.isVisible() && top + height >= event->rect().top())
            painter.drawText(0, top, lineNumbers_->width() - 4, fontMetrics().height(), Qt::AlignRight,
                             QString::number(block.blockNumber() + 1));
        block = block.next();
        top += height;
    }
}

void CodeEditor::goTo(int line, int column)
{
    const QTextBlock block = document()->findBlockByNumber(std::max(0, line - 1));
    QTextCursor cursor(block);
    cursor.movePosition(QTextCursor::Right, QTextCursor::MoveAnchor, std::clamp(column - 1, 0, std::max(0, block.length() - 1)));
    setTextCursor(cursor);
    centerCursor();
    setFocus();
}

CudaHighlighter::CudaHighlighter(QTextDocument* document) : QSyntaxHighlighter(document)
{
    const auto format = [](const QColor& color, bool bold = false) {
        QTextCharFormat f;
        f.setForeground(color);
        if (bold) f.setFontWeight(QFont::Bold);
        return f;
    };
    const QStringList keywords = {
        "auto", "bool", "break", "case", "char", "const", "constexpr", "continue", "default", "do", "double", "else",
        "enum", "extern", "false", "float", "for", "if", "inline", "int", "long", "namespace", "return", "short",
        "signed", "sizeof", "static", "static_assert", "struct", "switch", "template", "true", "typedef", "typename",
        "unsigned", "using", "void", "volatile", "while"};
    const QStringList cuda = {"__global__", "__device__", "__host__", "__shared__", "__constant__", "__restrict__",
                              "__launch_bounds__", "__forceinline__", "__syncthreads", "__syncwarp", "threadIdx",
                              "blockIdx", "blockDim", "gridDim", "warpSize", "atomicAdd", "atomicMax", "atomicMin",
                              "atomicCAS", "__shfl_sync", "__ldg"};
    rules_.push_back({QRegularExpression("\\b(" + keywords.join('|') + ")\\b"), format(QColor(0, 0, 160), true)});
    rules_.push_back({QRegularExpression("(?<![\\w])(" + cuda.join('|') + ")\\b"), format(QColor(140, 0, 140), true)});
    rules_.push_back({QRegularExpression(QStringLiteral("\\bkl::\\w+|\\bKL_\\w+")), format(QColor(0, 110, 110))});
    rules_.push_back({QRegularExpression(QStringLiteral("\\b\\d+(\\.\\d*)?([eE][-+]?\\d+)?[fFuUlL]*\\b")), format(QColor(160, 80, 0))});
    rules_.push_back({QRegularExpression(QStringLiteral("\"([^\"\\\\]|\\\\.)*\"")), format(QColor(0, 128, 0))});
    rules_.push_back({QRegularExpression(QStringLiteral("^\\s*#.*")), format(QColor(120, 90, 0))});
    rules_.push_back({QRegularExpression(QStringLiteral("//.*")), format(QColor(110, 110, 110))});
    comment_ = format(QColor(110, 110, 110));
}

void CudaHighlighter::highlightBlock(const QString& text)
{
    for (const Rule& rule : rules_)
        for (auto it = rule.pattern.globalMatch(text); it.hasNext();) {
            const QRegularExpressionMatch m = it.next();
            setFormat(int(m.capturedStart()), int(m.capturedLength()), rule.format);
        }
    // Block comments may span lines: state 1 = inside one at the end of this line.
    int start = previousBlockState() == 1 ? 0 : int(text.indexOf(QStringLiteral("/*")));
    setCurrentBlockState(0);
    while (start >= 0) {
        const int end = int(text.indexOf(QStringLiteral("*/"), start + (previousBlockState() == 1 && start == 0 ? 0 : 2)));
        const int length = end < 0 ? int(text.size()) - start : end - start + 2;
        if (end < 0) setCurrentBlockState(1);
        setFormat(start, length, comment_);
        start = end < 0 ? -1 : int(text.indexOf(QStringLiteral("/*"), start + length));
    }
}

KernelSourcePanel::KernelSourcePanel(QWidget* parent)
    : QWidget(parent),
      editor_(new CodeEditor),
      templates_(new QToolButton),
      block_(new QLineEdit),
      tile_(new QLineEdit),
      sharedBytes_(new QSpinBox),
      timeout_(new QDoubleSpinBox),
      useInRuns_(new QCheckBox(tr("Run as a GPU variant"))),
      diagnostics_(new QListWidget),
      status_(new QLabel)
{
    new CudaHighlighter(editor_->document());
    templates_->setText(tr("Template"));
    templates_->setPopupMode(QToolButton::InstantPopup);
    templates_->setToolTip(tr("Replace the text with a teaching kernel for this op"));
    auto* open = new QPushButton(tr("Open…"));
    auto* save = new QPushButton(tr("Save…"));
    auto* compile = new QPushButton(tr("Compile"));
    compile->setToolTip(tr("Compile with NVRTC for this GPU (Ctrl+B)"));

    block_->setPlaceholderText(QStringLiteral("16x16"));
    block_->setToolTip(tr("Threads per block, e.g. 256 or 32x8 (KL_BLOCK_X, KL_BLOCK_Y)"));
    tile_->setPlaceholderText(tr("= block"));
    tile_->setToolTip(tr("Elements one block covers; the grid covers the op's work in tiles (KL_TILE_X, KL_TILE_Y)"));
    sharedBytes_->setRange(0, 1 << 20);
    sharedBytes_->setSuffix(QStringLiteral(" B"));
    sharedBytes_->setToolTip(tr("Dynamic shared memory per block"));
    timeout_->setRange(0.1, 600);
    timeout_->setValue(5);
    timeout_->setSuffix(QStringLiteral(" s"));
    timeout_->setToolTip(tr("A launch still running after this long is stopped (its worker process ends)"));
    useInRuns_->setToolTip(tr("Add custom:<kernel name> to the GPU variants (Operation dock) and to Compare all variants"));

    auto* buttons = new QHBoxLayout;
    for (QWidget* w : std::initializer_list<QWidget*>{templates_, open, save, compile}) buttons->addWidget(w);
    buttons->addStretch();
    auto* launch = new QHBoxLayout;
    launch->addWidget(new QLabel(tr("Block")));
    launch->addWidget(block_);
    launch->addWidget(new QLabel(tr("Tile")));
    launch->addWidget(tile_);
    launch->addWidget(new QLabel(tr("Shared")));
    launch->addWidget(sharedBytes_);
    launch->addWidget(new QLabel(tr("Time-out")));
    launch->addWidget(timeout_);
    auto* splitter = new QSplitter(Qt::Vertical);
    splitter->addWidget(editor_);
    splitter->addWidget(diagnostics_);
    splitter->setStretchFactor(0, 4);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(buttons);
    layout->addLayout(launch);
    layout->addWidget(useInRuns_);
    layout->addWidget(splitter, 1);
    layout->addWidget(status_);
    status_->setWordWrap(true);

    connect(compile, &QPushButton::clicked, this, &KernelSourcePanel::compileRequested);
    connect(useInRuns_, &QCheckBox::toggled, this, &KernelSourcePanel::kernelChanged);
    connect(diagnostics_, &QListWidget::currentRowChanged, this, &KernelSourcePanel::goToDiagnostic);
    connect(open, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open kernel"), path_, tr("CUDA source (*.cu *.cuh);;All files (*)"));
        QString error;
        if (!path.isEmpty() && !openFile(path, &error)) showError(error);
    });
    connect(save, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Save kernel"), path_.isEmpty() ? QStringLiteral("kernel.cu") : path_,
                                                          tr("CUDA source (*.cu)"));
        QString error;
        if (!path.isEmpty() && !saveFile(path, &error)) showError(error);
    });
    rebuildTemplateMenu();
    loadTemplate(QString());
}

void KernelSourcePanel::setOp(app::Op op)
{
    if (op == op_) return;
    op_ = op;
    rebuildTemplateMenu();
    emit kernelChanged();
}

void KernelSourcePanel::rebuildTemplateMenu()
{
    auto* menu = new QMenu(templates_);
    for (const gpu::KernelTemplate& t : gpu::kernelTemplates()) {
        if (QString::fromStdString(t.op) != app::toString(op_)) continue;
        QAction* a = menu->addAction(QString::fromStdString(t.name), this, [this, name = t.name] { loadTemplate(QString::fromStdString(name)); });
        a->setToolTip(QString::fromStdString(t.description));
    }
    menu->setToolTipsVisible(true);
    delete templates_->menu();
    templates_->setMenu(menu);
}

void KernelSourcePanel::takeLaunch(const std::string& source)
{
    gpu::UserKernelLaunch l;
    try {
        l = gpu::launchFromSource(source);
    } catch (const InvalidArgument& e) {
        showError(QString::fromUtf8(e.what()));
    }
    block_->setText(dimensionsText(l.blockX, l.blockY));
    tile_->setText(l.tileX > 0 ? dimensionsText(l.tileX, l.tileY) : QString());
    sharedBytes_->setValue(l.sharedBytes);
}

void KernelSourcePanel::loadTemplate(const QString& name)
{
    const gpu::KernelTemplate& t = gpu::kernelTemplate(app::toString(op_).toStdString(), name.toStdString());
    editor_->setPlainText(QString::fromStdString(t.source));
    path_.clear();
    takeLaunch(t.source);
    status_->setText(tr("Template %1 for %2: %3").arg(QString::fromStdString(t.name), app::toString(op_),
                                                       QString::fromStdString(t.description)));
    diagnostics_->clear();
    emit kernelChanged();
}

bool KernelSourcePanel::openFile(const QString& path, QString* error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = tr("Cannot read %1: %2").arg(path, file.errorString());
        return false;
    }
    const QByteArray text = file.readAll();
    editor_->setPlainText(QString::fromUtf8(text));
    path_ = path;
    takeLaunch(text.toStdString());
    status_->setText(tr("Opened %1").arg(path));
    emit kernelChanged();
    return true;
}

bool KernelSourcePanel::saveFile(const QString& path, QString* error)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(editor_->toPlainText().toUtf8()) < 0) {
        *error = tr("Cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    path_ = path;
    status_->setText(tr("Saved %1").arg(path));
    return true;
}

std::optional<app::CustomKernel> KernelSourcePanel::customKernel() const
{
    if (!useInRuns_->isChecked()) return std::nullopt;
    return kernel();
}

app::CustomKernel KernelSourcePanel::kernel() const
{
    app::CustomKernel k;
    k.path = path_;
    k.source = editor_->toPlainText().toStdString();
    k.entry = gpu::firstKernelName(k.source);
    if (k.entry.empty()) throw InvalidArgument("kernel source: no __global__ function in the editor");
    const QString block = block_->text().trimmed().isEmpty() ? block_->placeholderText() : block_->text().trimmed();
    gpu::parseDimensions(block.toStdString(), k.launch.blockX, k.launch.blockY, "block");
    if (!tile_->text().trimmed().isEmpty())
        gpu::parseDimensions(tile_->text().trimmed().toStdString(), k.launch.tileX, k.launch.tileY, "tile");
    k.launch.sharedBytes = sharedBytes_->value();
    k.timeoutSeconds = timeout_->value();
    return k;
}

void KernelSourcePanel::showBuild(const gpu::UserKernelBinary& binary, const QString& compiledFor)
{
    shown_ = binary.diagnostics;
    diagnostics_->clear();
    for (const gpu::Diagnostic& d : shown_) {
        auto* item = new QListWidgetItem(QString::fromStdString(d.text()), diagnostics_);
        item->setForeground(d.severity == "error" ? QColor(180, 0, 0) : QColor(150, 100, 0));
    }
    const int errors = int(std::count_if(shown_.begin(), shown_.end(), [](const gpu::Diagnostic& d) { return d.severity == "error"; }));
    status_->setText(binary.ok ? tr("Compiles for %1%2; %3 warning(s)")
                                     .arg(compiledFor, binary.fromCache ? tr(" (cached)") : QString())
                                     .arg(int(shown_.size()))
                               : tr("%1 error(s) for %2: click one to go to its line").arg(errors).arg(compiledFor));
    if (binary.ok) emit kernelChanged();
}

void KernelSourcePanel::showError(const QString& message)
{
    shown_.clear();
    diagnostics_->clear();
    status_->setText(message);
}

void KernelSourcePanel::goToDiagnostic(int row)
{
    if (row < 0 || row >= int(shown_.size())) return;
    const gpu::Diagnostic& d = shown_[size_t(row)];
    // Messages in the headers KernelLab provides have no line in this text to go to.
    if (d.line > 0 && QString::fromStdString(d.file) == (path_.isEmpty() ? QStringLiteral("kernel.cu") : path_))
        editor_->goTo(d.line, d.column);
}

} // namespace kl::gui
