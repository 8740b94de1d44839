// Run-time compilation of users' kernels with NVRTC: the contract check, the compiler's messages
// as FILE:LINE:COL, and the on-disk cache. NVRTC needs no GPU, so this runs on CI too.
#include "kernellab/gpu/user_kernel.hpp"

#include "kernellab/error.hpp"

#include <nvrtc.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <regex>
#include <sstream>

namespace kl::gpu {

namespace {

/// The contract check appended to a user's source is attributed to this file name, so that its
/// messages can be told from the user's and replaced by one that says what the op expects.
constexpr const char* kContractFile = "kernellab-contract";

void nvrtcCheck(nvrtcResult result, const char* call)
{
    if (result != NVRTC_SUCCESS) throw std::runtime_error(std::string(call) + ": " + nvrtcGetErrorString(result));
}
#define KL_NVRTC_TRY(call) nvrtcCheck((call), #call)

/// NVRTC loads libnvrtc-builtins by name when it first compiles, so only where the dynamic linker
/// looks (ld.so.conf, LD_LIBRARY_PATH); a toolkit that is not registered there, such as one
/// unpacked or mounted into a container, fails with NVRTC_ERROR_BUILTIN_OPERATION_FAILURE.
/// Loading it first from libnvrtc's own directory makes the toolkit's lib64 enough, as it is for
/// libnvrtc itself. Where that fails, NVRTC's own search still runs and reports.
void loadBuiltinsBesideNvrtc()
{
    static std::once_flag once;
    std::call_once(once, [] {
        Dl_info library{};
        int major = 0, minor = 0;
        if (!dladdr(reinterpret_cast<void*>(&nvrtcVersion), &library) || !library.dli_fname ||
            nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
            return;
        const std::filesystem::path builtins = std::filesystem::path(library.dli_fname).parent_path() /
                                               ("libnvrtc-builtins.so." + std::to_string(major) + "." + std::to_string(minor));
        dlopen(builtins.c_str(), RTLD_NOW | RTLD_GLOBAL);  // kept loaded for the process, as NVRTC keeps it
    });
}

struct ProgramDeleter {
    void operator()(nvrtcProgram p) const noexcept { nvrtcDestroyProgram(&p); }
};
using Program = std::unique_ptr<std::remove_pointer_t<nvrtcProgram>, ProgramDeleter>;

const char* elementType(int depth)
{
    switch (depth) {
    case CV_8U: return "unsigned char";
    case CV_16U: return "unsigned short";
    case CV_32F: return "float";
    }
    throw InvalidArgument("depth: user kernels take u8, u16 or f32 (got OpenCV depth " + std::to_string(depth) + ")");
}

/// The argument type of the op's entry point (kernellab.cuh).
const char* argumentType(const std::string& op)
{
    if (op == "conv2d") return "kl::Conv2dArgs";
    if (op == "conv1d") return "kl::Conv1dArgs";
    if (op == "histogram") return "kl::HistogramArgs";
    if (op == "transpose") return "kl::TransposeArgs";
    throw InvalidArgument("op: '" + op + "' is not conv2d, conv1d, histogram or transpose");
}

std::string expectedSignature(const UserKernelSource& s)
{
    return "__global__ void " + s.entry + "(" + argumentType(s.op) + " args)";
}

/// The user's code between KernelLab's lines: kernellab.cuh before it (so kl:: is there even
/// without the #include), the check of the entry point after it.
std::string programText(const UserKernelSource& s)
{
    std::string quoted;
    for (char c : s.fileName) quoted += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    return std::string("#line 1 \"") + kContractFile + "\"\n#include <kernellab.cuh>\n#line 1 \"" + quoted + "\"\n" +
           s.code + "\n#line 1 \"" + kContractFile + "\"\n"
           "namespace kl_contract {\n"
           "template <typename T, typename U> struct Same { static constexpr bool value = false; };\n"
           "template <typename T> struct Same<T, T> { static constexpr bool value = true; };\n"
           "static_assert(Same<decltype(&" + s.entry + "), void (*)(" + argumentType(s.op) +
           ")>::value, \"entry point\");\n}\n";
}

/// NVRTC's log: "file(12): error: message", the offending line indented by two, then a caret
/// under the column.
std::vector<Diagnostic> parseLog(const std::string& log)
{
    static const std::regex header(R"(^(.+)\((\d+)\): (catastrophic error|error|warning)(?: #[\w-]+)?: (.*)$)");
    std::vector<Diagnostic> out;
    std::istringstream lines(log);
    std::string line;
    while (std::getline(lines, line)) {
        std::smatch m;
        if (std::regex_match(line, m, header)) {
            Diagnostic d;
            d.file = m[1].str();
            d.line = std::stoi(m[2].str());
            d.severity = m[3].str() == "warning" ? "warning" : "error";
            d.message = m[4].str();
            out.push_back(d);
        } else if (!out.empty() && out.back().column == 0 && line.find_first_not_of(' ') != std::string::npos &&
                   line.find_first_not_of(' ') == line.find('^') && line.find('^') == line.rfind('^')) {
            out.back().column = int(line.find('^')) - 1;  // the echo is indented by two; columns count from 1
        }
    }
    return out;
}

int definitionLine(const std::string& code, const std::string& entry)
{
    std::istringstream lines(code);
    std::string line;
    const std::regex definition("\\b" + entry + "\\s*\\(");
    for (int number = 1; std::getline(lines, line); ++number)
        if (line.find("__global__") != std::string::npos && std::regex_search(line, definition)) return number;
    return 1;
}

/// The user's own messages; where only the contract check failed, one message saying what the
/// entry point must be instead of the check's.
std::vector<Diagnostic> explain(std::vector<Diagnostic> diagnostics, const UserKernelSource& s)
{
    // NVRTC checks the name expression of the entry (nvrtcAddNameExpression) in "__nv_name_map".
    const auto fromContract = [](const Diagnostic& d) { return d.file == kContractFile || d.file == "__nv_name_map"; };
    const bool userErrors = std::any_of(diagnostics.begin(), diagnostics.end(), [&](const Diagnostic& d) {
        return d.severity == "error" && !fromContract(d);
    });
    const bool contractErrors = std::any_of(diagnostics.begin(), diagnostics.end(), fromContract);
    const bool undefined = std::any_of(diagnostics.begin(), diagnostics.end(), [&](const Diagnostic& d) {
        return fromContract(d) && d.message.find("is undefined") != std::string::npos;
    });
    diagnostics.erase(std::remove_if(diagnostics.begin(), diagnostics.end(), fromContract), diagnostics.end());
    if (contractErrors && !userErrors) {
        Diagnostic d;
        d.file = s.fileName;
        d.severity = "error";
        if (undefined) {
            d.line = 1;
            d.message = "no kernel named '" + s.entry + "': a " + s.op + " kernel is " + expectedSignature(s) +
                        " (docs/custom-kernels.md)";
        } else {
            d.line = definitionLine(s.code, s.entry);
            d.message = "'" + s.entry + "' does not match the " + s.op + " entry point " + expectedSignature(s) +
                        " (docs/custom-kernels.md)";
        }
        diagnostics.insert(diagnostics.begin(), d);
    }
    std::stable_partition(diagnostics.begin(), diagnostics.end(), [](const Diagnostic& d) { return d.severity == "error"; });
    return diagnostics;
}

uint64_t fnv1a(uint64_t hash, const std::string& text)
{
    for (unsigned char c : text) hash = (hash ^ c) * 0x100000001b3ull;
    return (hash ^ 0xff) * 0x100000001b3ull;  // a separator, so "ab"+"c" and "a"+"bc" differ
}

std::filesystem::path cacheDirectory()
{
    if (const char* dir = std::getenv(kKernelCacheVariable); dir && *dir) return dir;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return std::filesystem::path(xdg) / "kernellab" / "kernels";
    if (const char* home = std::getenv("HOME"); home && *home)
        return std::filesystem::path(home) / ".cache" / "kernellab" / "kernels";
    return {};
}

bool readFile(const std::filesystem::path& path, std::string& text)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::ostringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
    return bool(in);
}

/// Best effort: a cache that cannot be written only costs the next run a compilation.
void writeCached(const std::filesystem::path& path, const std::string& text)
{
    std::error_code error;
    std::filesystem::create_directories(path.parent_path(), error);
    const std::filesystem::path partial = path.string() + ".partial";
    {
        std::ofstream out(partial, std::ios::binary);
        out.write(text.data(), std::streamsize(text.size()));
        if (!out) return;
    }
    std::filesystem::rename(partial, path, error);
}

} // namespace

std::string Diagnostic::text() const
{
    std::string where = file;
    if (line > 0) where += ":" + std::to_string(line);
    if (column > 0) where += ":" + std::to_string(column);
    return where + ": " + severity + ": " + message;
}

std::string UserKernelBinary::diagnosticsText() const
{
    std::string text;
    for (const Diagnostic& d : diagnostics) text += d.text() + "\n";
    return text;
}

std::string archOf(const DeviceInfo& device)
{
    return "sm_" + std::to_string(device.computeMajor) + std::to_string(device.computeMinor);
}

std::vector<std::string> supportedArchs()
{
    int count = 0;
    KL_NVRTC_TRY(nvrtcGetNumSupportedArchs(&count));
    std::vector<int> archs(size_t(std::max(count, 0)));
    KL_NVRTC_TRY(nvrtcGetSupportedArchs(archs.data()));
    std::vector<std::string> names;
    for (int a : archs) names.push_back("sm_" + std::to_string(a));
    return names;
}

UserKernelBinary compileUserKernel(const UserKernelSource& s, const std::string& arch)
{
    argumentType(s.op);  // throws for an unknown op
    validateLaunch(s.launch);
    if (s.entry.empty()) throw InvalidArgument("kernel name: none given, and the source defines no __global__ function");
    const std::vector<std::string> archs = supportedArchs();
    if (std::find(archs.begin(), archs.end(), arch) == archs.end()) {
        std::string names;
        for (const std::string& a : archs) names += (names.empty() ? "" : ", ") + a;
        throw InvalidArgument("arch: '" + arch + "' is not one NVRTC compiles for (" + names + ")");
    }

    std::vector<std::string> options = {
        "--gpu-architecture=" + arch,
        "-std=c++17",
        "-lineinfo",  // compute-sanitizer and Nsight name the user's lines
        std::string("-DKL_INPUT_TYPE=") + elementType(s.inputDepth),
        std::string("-DKL_OUTPUT_TYPE=") + elementType(s.outputDepth),
        "-DKL_BLOCK_X=" + std::to_string(s.launch.blockX),
        "-DKL_BLOCK_Y=" + std::to_string(s.launch.blockY),
        "-DKL_TILE_X=" + std::to_string(s.launch.tileWidth()),
        "-DKL_TILE_Y=" + std::to_string(s.launch.tileHeight()),
    };
    const std::string program = programText(s);

    int major = 0, minor = 0;
    KL_NVRTC_TRY(nvrtcVersion(&major, &minor));
    uint64_t key = fnv1a(0xcbf29ce484222325ull, program);
    key = fnv1a(key, s.fileName + "\n" + s.entry + "\n" + std::to_string(major) + "." + std::to_string(minor));
    for (const std::string& o : options) key = fnv1a(key, o);
    for (const EmbeddedHeader& h : userKernelHeaders()) key = fnv1a(key, h.text);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(key));
    const std::filesystem::path cache = cacheDirectory();

    const auto cached = [&](const char* extension) { return cache / (std::string(hex) + extension); };

    UserKernelBinary binary;
    binary.arch = arch;
    std::string log;
    if (!cache.empty() && readFile(cached(".cubin"), binary.cubin) && readFile(cached(".symbol"), binary.loweredName) &&
        readFile(cached(".log"), log) && !binary.cubin.empty()) {
        binary.ok = binary.fromCache = true;
        binary.diagnostics = explain(parseLog(log), s);  // its warnings, as the first compilation gave them
        return binary;
    }

    loadBuiltinsBesideNvrtc();
    std::vector<const char*> headerTexts, headerNames;
    for (const EmbeddedHeader& h : userKernelHeaders()) {
        headerTexts.push_back(h.text.c_str());
        headerNames.push_back(h.name.c_str());
    }
    nvrtcProgram raw = nullptr;
    KL_NVRTC_TRY(nvrtcCreateProgram(&raw, program.c_str(), s.fileName.c_str(), int(headerTexts.size()),
                                    headerTexts.data(), headerNames.data()));
    const Program guard(raw);
    KL_NVRTC_TRY(nvrtcAddNameExpression(raw, s.entry.c_str()));
    std::vector<const char*> optionPointers;
    for (const std::string& o : options) optionPointers.push_back(o.c_str());
    const nvrtcResult compiled = nvrtcCompileProgram(raw, int(optionPointers.size()), optionPointers.data());

    size_t logSize = 0;
    KL_NVRTC_TRY(nvrtcGetProgramLogSize(raw, &logSize));
    log.assign(logSize, '\0');
    KL_NVRTC_TRY(nvrtcGetProgramLog(raw, log.data()));
    log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
    binary.diagnostics = explain(parseLog(log), s);
    if (compiled != NVRTC_SUCCESS) {
        if (binary.diagnostics.empty())  // a failure NVRTC gave no message for: say what it returned
            binary.diagnostics.push_back({s.fileName, 0, 0, "error", nvrtcGetErrorString(compiled)});
        return binary;
    }

    const char* lowered = nullptr;
    KL_NVRTC_TRY(nvrtcGetLoweredName(raw, s.entry.c_str(), &lowered));
    binary.loweredName = lowered;
    size_t cubinSize = 0;
    KL_NVRTC_TRY(nvrtcGetCUBINSize(raw, &cubinSize));
    binary.cubin.resize(cubinSize);
    KL_NVRTC_TRY(nvrtcGetCUBIN(raw, binary.cubin.data()));
    binary.ok = true;
    if (!cache.empty()) {
        writeCached(cached(".log"), log);
        writeCached(cached(".symbol"), binary.loweredName);
        writeCached(cached(".cubin"), binary.cubin);
    }
    return binary;
}

} // namespace kl::gpu
