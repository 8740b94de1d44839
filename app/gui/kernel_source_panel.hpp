#pragma once
// The Kernel source dock: write your own CUDA kernel for the current op (docs/custom-kernels.md),
// start from a template, compile it (Ctrl+B) with the messages listed and each a click away from
// its line, set its launch, and run it as the GPU variant "custom:<name>" beside the built-in ones.
#include "session.hpp"

#include <QPlainTextEdit>
#include <QSyntaxHighlighter>
#include <QWidget>

#include <optional>

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QSpinBox;
class QToolButton;

namespace kl::gui {

/// A plain-text editor with line numbers in a margin and the current line marked.
class CodeEditor : public QPlainTextEdit {
    Q_OBJECT
public:
    explicit CodeEditor(QWidget* parent = nullptr);
    /// Puts the cursor at `line`, `column` (1-based; column 0: the line's start) and shows it.
    void goTo(int line, int column);
    [[nodiscard]] int lineNumberAreaWidth() const;
    void paintLineNumbers(QPaintEvent* event);

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    QWidget* lineNumbers_;
};

/// CUDA C++: keywords, CUDA's qualifiers and built-ins, kl:: names, numbers, strings, comments,
/// preprocessor lines.
class CudaHighlighter : public QSyntaxHighlighter {
    Q_OBJECT
public:
    explicit CudaHighlighter(QTextDocument* document);

protected:
    void highlightBlock(const QString& text) override;

private:
    struct Rule {
        QRegularExpression pattern;
        QTextCharFormat format;
    };
    std::vector<Rule> rules_;
    QTextCharFormat comment_;
};

class KernelSourcePanel : public QWidget {
    Q_OBJECT
public:
    explicit KernelSourcePanel(QWidget* parent = nullptr);

    /// The op the kernel is for: the template menu lists its templates.
    void setOp(app::Op op);
    [[nodiscard]] app::Op op() const { return op_; }
    /// Replaces the text with one of the op's templates and takes its launch.
    void loadTemplate(const QString& name);
    /// Reads / writes a .cu file; false with `error` set when it cannot.
    bool openFile(const QString& path, QString* error);
    bool saveFile(const QString& path, QString* error);
    /// The kernel as written: the text, its first kernel, the launch fields. Throws
    /// kl::InvalidArgument for a launch field that does not parse or a source without a kernel.
    [[nodiscard]] app::CustomKernel kernel() const;
    /// kernel() for runs of the op; nullopt while "Run as a GPU variant" is off.
    [[nodiscard]] std::optional<app::CustomKernel> customKernel() const;
    /// Lists a compilation's messages (a click goes to the line) and says how it went.
    void showBuild(const gpu::UserKernelBinary& binary, const QString& compiledFor);
    void showError(const QString& message);
    /// Goes to the line and column of diagnostic `row`.
    void goToDiagnostic(int row);

    [[nodiscard]] CodeEditor* editor() const { return editor_; }
    [[nodiscard]] QListWidget* diagnostics() const { return diagnostics_; }
    [[nodiscard]] QCheckBox* useInRuns() const { return useInRuns_; }
    [[nodiscard]] QLabel* status() const { return status_; }
    [[nodiscard]] QLineEdit* blockField() const { return block_; }

signals:
    void compileRequested();
    /// Whether and as what the kernel takes part in runs may have changed (toggled, compiled, renamed).
    void kernelChanged();

private:
    void rebuildTemplateMenu();
    void takeLaunch(const std::string& source);

    app::Op op_ = app::Op::Conv2D;
    QString path_;
    CodeEditor* editor_;
    QToolButton* templates_;
    QLineEdit* block_;
    QLineEdit* tile_;
    QSpinBox* sharedBytes_;
    QDoubleSpinBox* timeout_;
    QCheckBox* useInRuns_;
    QListWidget* diagnostics_;
    QLabel* status_;
    std::vector<gpu::Diagnostic> shown_;
};

} // namespace kl::gui
