#include "kernellab/transpose.hpp"

#include "kernellab/image.hpp"

#include "parallel.hpp"
#include "pixel_block.hpp"

#include <opencv2/core.hpp>
#include <opencv2/core/hal/intrin.hpp>

#include <cstring>

namespace kl {

namespace {

/// Side of the square tiles the OpenCV backend transposes one by one, for pixel sizes
/// cv::transpose handles; register-block tiles are kTileBytes wide (two cache lines) and as tall
/// as they are wide in pixels: the fastest of the tile sizes tried (docs/performance.md, "CPU side,
/// second pass").
constexpr int kTileSide = 64;
constexpr int kTileBytes = 128;

using detail::PixelBlock;

/// Copies the rows x cols pixels at `in` to their transposed places at `out`, one by one.
void transposeElements(PixelBlock in, uchar* out, size_t outStep, int rows, int cols, size_t pixelBytes)
{
    for (int y = 0; y < rows; ++y) {
        const uchar* source = in.row(y);
        for (int x = 0; x < cols; ++x) std::memcpy(out + size_t(x) * outStep + size_t(y) * pixelBytes, source + size_t(x) * pixelBytes, pixelBytes);
    }
}

/// Transposes the n x n block of elements at `in` into `out` (n = the lanes of `Lanes`, one
/// element a lane) through registers: log2(n) rounds of the perfect shuffle, each zipping row i
/// with row i + n/2, leave row j holding column j.
template <typename Lanes> void transposeBlock(const uchar* in, size_t inStep, uchar* out, size_t outStep)
{
    using Lane = typename Lanes::lane_type;
    constexpr int n = Lanes::nlanes;
    Lanes rows[n], zipped[n];
    for (int i = 0; i < n; ++i) rows[i] = cv::v_load(reinterpret_cast<const Lane*>(in + size_t(i) * inStep));
    for (int width = 1; width < n; width *= 2) {
        for (int i = 0; i < n / 2; ++i) cv::v_zip(rows[i], rows[i + n / 2], zipped[2 * i], zipped[2 * i + 1]);
        for (int i = 0; i < n; ++i) rows[i] = zipped[i];
    }
    for (int j = 0; j < n; ++j) cv::v_store(reinterpret_cast<Lane*>(out + size_t(j) * outStep), rows[j]);
}

/// Transposes the rows x cols tile at `in` to `out`: whole register blocks, each written down its
/// output rows so that the blocks below it fill those rows' cache lines next, then the ragged
/// right and bottom edges element by element.
template <typename Lanes> void transposeTile(PixelBlock in, uchar* out, size_t outStep, int rows, int cols)
{
    constexpr int n = Lanes::nlanes;
    constexpr size_t pixelBytes = sizeof(typename Lanes::lane_type);
    const int fullWidth = cols / n * n, fullHeight = rows / n * n;
    for (int x = 0; x < fullWidth; x += n)
        for (int y = 0; y < fullHeight; y += n)
            transposeBlock<Lanes>(in.row(y) + size_t(x) * pixelBytes, in.step,
                                  out + size_t(x) * outStep + size_t(y) * pixelBytes, outStep);
    transposeElements({in.data + size_t(fullWidth) * pixelBytes, in.step}, out + size_t(fullWidth) * outStep, outStep, rows,
                      cols - fullWidth, pixelBytes);
    transposeElements({in.row(fullHeight), in.step}, out + size_t(fullHeight) * pixelBytes, outStep,
                      rows - fullHeight, fullWidth, pixelBytes);
}

/// cv::transpose of one tile, for pixel sizes the register blocks do not take.
void transposeTileByOpenCV(PixelBlock in, uchar* out, size_t outStep, int rows, int cols, int type)
{
    const cv::Mat tile(rows, cols, type, const_cast<uchar*>(in.data), in.step);
    cv::Mat target(cols, rows, type, out, outStep);
    cv::transpose(tile, target);
}

} // namespace

void transposeReference(const cv::Mat& input, cv::Mat& output)
{
    validateImage(input, "transpose input");
    createChecked(output, input.cols, input.rows, input.type(), "transpose output");
    transposeElements({input.data, input.step}, output.data, output.step, input.rows, input.cols, input.elemSize());
}

cv::Mat transposeReference(const cv::Mat& input)
{
    cv::Mat output;
    transposeReference(input, output);
    return output;
}

void transposeOpenCV(const cv::Mat& input, cv::Mat& output)
{
    validateImage(input, "transpose input");
    createChecked(output, input.cols, input.rows, input.type(), "transpose output");
    // Pixels of 1, 2, 4 or 8 bytes move through 128-bit registers (OpenCV's universal
    // intrinsics): cv::transpose copies them one at a time, far from the memory's rate without
    // IPP (docs/performance.md). Other pixel sizes keep cv::transpose.
    void (*tileTranspose)(PixelBlock, uchar*, size_t, int, int) = nullptr;
    switch (input.elemSize()) {
    case 1: tileTranspose = transposeTile<cv::v_uint8x16>; break;
    case 2: tileTranspose = transposeTile<cv::v_uint16x8>; break;
    case 4: tileTranspose = transposeTile<cv::v_uint32x4>; break;
    case 8: tileTranspose = transposeTile<cv::v_float64x2>; break;  // only moved, never computed on
    default: break;
    }
    const size_t pixelBytes = input.elemSize();
    const int side = tileTranspose ? kTileBytes / int(pixelBytes) : kTileSide;
    const int tileRows = (input.rows + side - 1) / side, tileCols = (input.cols + side - 1) / side;
    // A piece is a row of tiles: a few hundred pieces keep the threads evenly busy.
    detail::forEachPiece(tileRows, [&](int, int tileRow) {
        const int y = tileRow * side, rows = std::min(side, input.rows - y);
        for (int tileCol = 0; tileCol < tileCols; ++tileCol) {
            const int x = tileCol * side, cols = std::min(side, input.cols - x);
            const PixelBlock tile{input.ptr(y) + size_t(x) * pixelBytes, input.step};
            uchar* target = output.ptr(x) + size_t(y) * pixelBytes;
            if (tileTranspose)
                tileTranspose(tile, target, output.step, rows, cols);
            else
                transposeTileByOpenCV(tile, target, output.step, rows, cols, input.type());
        }
    });
}

cv::Mat transposeOpenCV(const cv::Mat& input)
{
    cv::Mat output;
    transposeOpenCV(input, output);
    return output;
}

} // namespace kl
