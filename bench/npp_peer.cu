// npp_peer: NVIDIA NPP as a peer for the coverage matrix (kernellab-cli bench --matrix), built
// where NPP is installed (the GPU machine):
//   nvcc -O2 -std=c++17 bench/npp_peer.cu -lnppif -lnppidei -lnppc -o npp_peer
//   npp_peer DIR [WIDTHxHEIGHT]
// DIR is a matrix's --dump-inputs folder (run with --border replicate: NPP's filters have no
// other border). A small matrix is enough for the check (--sizes 1021x767): 8192^2 inputs of every
// cell filled the GPU machine's free disk. For every conv2d and transpose cell NPP has a function for, it first runs NPP
// on the cell's input and compares with KernelLab's verified output there (integer outputs
// within 1, f32 within 1e-4 relative); then times NPP on a random image of WIDTHxHEIGHT (default
// 8192x8192) of the cell's depth and channels with the cell's kernel: CUDA events, 3 warm-ups,
// median of 20 with min and max. NPP's filters convolve (taps reversed), so each kernel is tried
// reversed first, as it is, second; the line says which matched. One CSV line per cell on stdout:
//   op,case,depth,channels,npp_function,verified,max_diff,kernel_orientation,median_ms,min_ms,max_ms
#include <cuda_runtime.h>
#include <npp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

void check(cudaError_t e, const char* what)
{
    if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(NppStatus s, const char* what)
{
    if (s != NPP_SUCCESS) throw std::runtime_error(std::string(what) + ": NppStatus " + std::to_string(int(s)));
}

/// A .npy array as KernelLab writes it: '|u1', '<u2' or '<f4', shape (rows, cols[, channels]).
struct Array {
    std::string descr;
    int rows = 0, cols = 0, channels = 1;
    std::vector<unsigned char> bytes;
    [[nodiscard]] size_t elementSize() const { return size_t(descr.back() - '0'); }
    [[nodiscard]] bool isFloat() const { return descr[1] == 'f'; }
};

Array readNpy(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path);
    char magic[8];
    in.read(magic, 8);
    if (std::memcmp(magic, "\x93NUMPY", 6) != 0) throw std::runtime_error(path + ": not a .npy file");
    uint32_t headerLength = 0;
    if (magic[6] == 1) {
        uint16_t n = 0;
        in.read(reinterpret_cast<char*>(&n), 2);
        headerLength = n;
    } else {
        in.read(reinterpret_cast<char*>(&headerLength), 4);
    }
    std::string header(headerLength, '\0');
    in.read(header.data(), headerLength);
    Array a;
    const size_t d = header.find("'descr': '") + 10;
    a.descr = header.substr(d, header.find('\'', d) - d);
    const size_t s = header.find("'shape': (") + 10;
    std::vector<int> shape;
    std::stringstream dims(header.substr(s, header.find(')', s) - s));
    for (std::string item; std::getline(dims, item, ',');)
        if (item.find_first_not_of(' ') != std::string::npos) shape.push_back(std::stoi(item));
    a.rows = shape.at(0);
    a.cols = shape.size() > 1 ? shape[1] : 1;
    a.channels = shape.size() > 2 ? shape[2] : 1;
    a.bytes.resize(size_t(a.rows) * a.cols * a.channels * a.elementSize());
    in.read(reinterpret_cast<char*>(a.bytes.data()), std::streamsize(a.bytes.size()));
    if (!in) throw std::runtime_error(path + ": truncated");
    return a;
}

NppStreamContext streamContext(cudaStream_t stream)
{
    NppStreamContext ctx{};
    ctx.hStream = stream;
    check(cudaGetDevice(&ctx.nCudaDeviceId), "cudaGetDevice");
    cudaDeviceProp p{};
    check(cudaGetDeviceProperties(&p, ctx.nCudaDeviceId), "cudaGetDeviceProperties");
    ctx.nMultiProcessorCount = p.multiProcessorCount;
    ctx.nMaxThreadsPerMultiProcessor = p.maxThreadsPerMultiProcessor;
    ctx.nMaxThreadsPerBlock = p.maxThreadsPerBlock;
    ctx.nSharedMemPerBlock = p.sharedMemPerBlock;
    ctx.nCudaDevAttrComputeCapabilityMajor = p.major;
    ctx.nCudaDevAttrComputeCapabilityMinor = p.minor;
    check(cudaStreamGetFlags(stream, &ctx.nStreamFlags), "cudaStreamGetFlags");
    return ctx;
}

/// One NPP call on device images of `size` (contiguous rows), or null where NPP has none.
using NppCall = std::function<NppStatus(const void* src, void* dst, NppiSize size, const float* kernel, NppiSize ksize,
                                        const NppStreamContext& ctx)>;

struct NppFunction {
    std::string name;
    NppCall call;
};

template <typename T, typename F>
NppCall filterCall(F f, int channels)
{
    return [f, channels](const void* src, void* dst, NppiSize size, const float* kernel, NppiSize ksize,
                         const NppStreamContext& ctx) {
        const int step = size.width * channels * int(sizeof(T));
        return f(static_cast<const T*>(src), step, size, NppiPoint{0, 0}, static_cast<T*>(dst), step, size, kernel, ksize,
                 NppiPoint{ksize.width / 2, ksize.height / 2}, NPP_BORDER_REPLICATE, ctx);
    };
}

template <typename T, typename F>
NppCall transposeCall(F f, int channels)
{
    return [f, channels](const void* src, void* dst, NppiSize size, const float*, NppiSize, const NppStreamContext& ctx) {
        return f(static_cast<const T*>(src), size.width * channels * int(sizeof(T)), static_cast<T*>(dst),
                 size.height * channels * int(sizeof(T)), size, ctx);
    };
}

NppFunction nppFunction(const std::string& op, const std::string& depth, int channels)
{
    const std::string c = "_C" + std::to_string(channels) + "R";
    if (op == "conv2d") {
        if (depth == "u8") {
            const auto f = channels == 1 ? nppiFilterBorder32f_8u_C1R_Ctx
                           : channels == 3 ? nppiFilterBorder32f_8u_C3R_Ctx
                                           : nppiFilterBorder32f_8u_C4R_Ctx;
            return {"nppiFilterBorder32f_8u" + c, filterCall<Npp8u>(f, channels)};
        }
        if (depth == "u16") {
            const auto f = channels == 1 ? nppiFilterBorder32f_16u_C1R_Ctx
                           : channels == 3 ? nppiFilterBorder32f_16u_C3R_Ctx
                                           : nppiFilterBorder32f_16u_C4R_Ctx;
            return {"nppiFilterBorder32f_16u" + c, filterCall<Npp16u>(f, channels)};
        }
        const auto f = channels == 1 ? nppiFilterBorder_32f_C1R_Ctx
                       : channels == 3 ? nppiFilterBorder_32f_C3R_Ctx
                                       : nppiFilterBorder_32f_C4R_Ctx;
        return {"nppiFilterBorder_32f" + c, filterCall<Npp32f>(f, channels)};
    }
    if (depth == "u8") {
        const auto f = channels == 1 ? nppiTranspose_8u_C1R_Ctx : channels == 3 ? nppiTranspose_8u_C3R_Ctx
                                                                                : nppiTranspose_8u_C4R_Ctx;
        return {"nppiTranspose_8u" + c, transposeCall<Npp8u>(f, channels)};
    }
    if (depth == "u16") {
        const auto f = channels == 1 ? nppiTranspose_16u_C1R_Ctx : channels == 3 ? nppiTranspose_16u_C3R_Ctx
                                                                                 : nppiTranspose_16u_C4R_Ctx;
        return {"nppiTranspose_16u" + c, transposeCall<Npp16u>(f, channels)};
    }
    const auto f = channels == 1 ? nppiTranspose_32f_C1R_Ctx : channels == 3 ? nppiTranspose_32f_C3R_Ctx
                                                                             : nppiTranspose_32f_C4R_Ctx;
    return {"nppiTranspose_32f" + c, transposeCall<Npp32f>(f, channels)};
}

/// The largest difference between `got` and `expected` (relative to max(1, |expected|) for f32).
double maxDifference(const std::vector<unsigned char>& a, const Array& expected)
{
    const std::vector<unsigned char>& b = expected.bytes;
    double worst = 0;
    const size_t n = a.size() / expected.elementSize();
    for (size_t i = 0; i < n; ++i) {
        double x = 0, y = 0;
        if (expected.elementSize() == 1) x = a[i], y = b[i];
        else if (expected.elementSize() == 2)
            x = reinterpret_cast<const uint16_t*>(a.data())[i], y = reinterpret_cast<const uint16_t*>(b.data())[i];
        else {
            x = reinterpret_cast<const float*>(a.data())[i], y = reinterpret_cast<const float*>(b.data())[i];
            worst = std::max(worst, std::abs(x - y) / std::max(1.0, std::abs(y)));
            continue;
        }
        worst = std::max(worst, std::abs(x - y));
    }
    return worst;
}

struct DeviceBuffer {
    void* p = nullptr;
    explicit DeviceBuffer(size_t bytes) { check(cudaMalloc(&p, std::max<size_t>(bytes, 1)), "cudaMalloc"); }
    ~DeviceBuffer() { cudaFree(p); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

std::vector<float> reversed(const Array& kernel)
{
    const auto* k = reinterpret_cast<const float*>(kernel.bytes.data());
    return std::vector<float>(std::make_reverse_iterator(k + kernel.rows * kernel.cols), std::make_reverse_iterator(k));
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: npp_peer DIR [WIDTHxHEIGHT]\n");
        return 2;
    }
    const std::string dir = argv[1];
    int width = 8192, height = 8192;
    if (argc > 2 && std::sscanf(argv[2], "%dx%d", &width, &height) != 2) {
        std::fprintf(stderr, "npp_peer: '%s' is not WIDTHxHEIGHT\n", argv[2]);
        return 2;
    }
    try {
        cudaStream_t stream;
        check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
        const NppStreamContext ctx = streamContext(stream);
        std::ifstream manifest(dir + "/cells.csv");
        if (!manifest) throw std::runtime_error("no " + dir + "/cells.csv (kernellab-cli bench --matrix --dump-inputs)");
        std::string line;
        std::getline(manifest, line);  // header
        std::printf("op,case,depth,channels,npp_function,verified,max_diff,kernel_orientation,median_ms,min_ms,max_ms\n");
        std::mt19937 random(7);
        std::vector<unsigned char> noise;
        while (std::getline(manifest, line)) {
            std::vector<std::string> f;
            std::stringstream fields(line);
            for (std::string item; std::getline(fields, item, ',');) f.push_back(item);
            const std::string op = f[0], what = f[1], depth = f[2], border = f[4];
            const int channels = std::stoi(f[3]);
            const Array input = readNpy(dir + "/" + f[5]);
            const Array expected = readNpy(dir + "/" + f[7]);
            if (op == "conv2d" && (border != "replicate" || expected.descr != input.descr)) continue;  // NPP has no such filter
            const NppFunction npp = nppFunction(op, depth, channels);
            std::vector<float> taps;
            NppiSize ksize{0, 0};
            std::vector<std::vector<float>> orientations;
            if (op == "conv2d") {
                const Array kernel = readNpy(dir + "/" + f[6]);
                ksize = {kernel.cols, kernel.rows};
                const auto* k = reinterpret_cast<const float*>(kernel.bytes.data());
                orientations = {reversed(kernel), std::vector<float>(k, k + kernel.rows * kernel.cols)};
            } else {
                orientations = {{}};
            }

            // Verify on the cell's own input against KernelLab's output.
            const NppiSize small{input.cols, input.rows};
            DeviceBuffer src(input.bytes.size()), dst(expected.bytes.size()), dTaps(25 * 25 * sizeof(float) * 4);
            check(cudaMemcpy(src.p, input.bytes.data(), input.bytes.size(), cudaMemcpyHostToDevice), "upload");
            double diff = 1e30;
            int orientation = -1;
            std::vector<unsigned char> got(expected.bytes.size());
            for (size_t o = 0; o < orientations.size() && orientation < 0; ++o) {
                if (!orientations[o].empty())
                    check(cudaMemcpy(dTaps.p, orientations[o].data(), orientations[o].size() * sizeof(float),
                                     cudaMemcpyHostToDevice),
                          "taps");
                check(npp.call(src.p, dst.p, small, static_cast<const float*>(dTaps.p), ksize, ctx), npp.name.c_str());
                check(cudaStreamSynchronize(stream), "sync");  // a non-blocking stream: cudaMemcpy would not wait
                check(cudaMemcpy(got.data(), dst.p, got.size(), cudaMemcpyDeviceToHost), "download");
                const double d = maxDifference(got, expected);
                const bool ok = expected.isFloat() ? d <= 1e-4 : d <= 1;
                if (ok || d < diff) diff = d;
                if (ok) orientation = int(o);
            }
            if (orientation < 0) {
                std::printf("%s,%s,%s,%d,%s,false,%g,-,,,\n", op.c_str(), what.c_str(), depth.c_str(), channels,
                            npp.name.c_str(), diff);
                continue;
            }
            if (!orientations[size_t(orientation)].empty())
                check(cudaMemcpy(dTaps.p, orientations[size_t(orientation)].data(),
                                 orientations[size_t(orientation)].size() * sizeof(float), cudaMemcpyHostToDevice),
                      "taps");

            // Time on a random image of the timing size: the first bytes of one buffer of floats in
            // [0, 1) (random bytes to the integer depths, finite values to f32).
            const size_t bytes = size_t(width) * height * channels * input.elementSize();
            if (noise.size() < bytes) {
                noise.resize(size_t(width) * height * 4 * sizeof(float));
                for (size_t i = 0; i < noise.size() / sizeof(float); ++i)
                    reinterpret_cast<float*>(noise.data())[i] = float(random() % 1000000) / 1e6f;
            }
            const std::vector<unsigned char>& host = noise;
            DeviceBuffer bigSrc(bytes), bigDst(bytes);
            check(cudaMemcpy(bigSrc.p, host.data(), bytes, cudaMemcpyHostToDevice), "upload");
            const NppiSize big{width, height};
            cudaEvent_t start, stop;
            check(cudaEventCreate(&start), "event");
            check(cudaEventCreate(&stop), "event");
            std::vector<float> ms;
            for (int i = 0; i < 23; ++i) {
                check(cudaEventRecord(start, stream), "record");
                check(npp.call(bigSrc.p, bigDst.p, big, static_cast<const float*>(dTaps.p), ksize, ctx), npp.name.c_str());
                check(cudaEventRecord(stop, stream), "record");
                check(cudaEventSynchronize(stop), "sync");
                float t = 0;
                check(cudaEventElapsedTime(&t, start, stop), "elapsed");
                if (i >= 3) ms.push_back(t);
            }
            cudaEventDestroy(start);
            cudaEventDestroy(stop);
            std::sort(ms.begin(), ms.end());
            std::printf("%s,%s,%s,%d,%s,true,%g,%s,%.5f,%.5f,%.5f\n", op.c_str(), what.c_str(), depth.c_str(), channels,
                        npp.name.c_str(), diff,
                        op != "conv2d" ? "-" : orientation == 0 ? "reversed (convolution)" : "as given (correlation)",
                        ms[ms.size() / 2], ms.front(), ms.back());
            std::fflush(stdout);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "npp_peer: %s\n", e.what());
        return 1;
    }
    return 0;
}
