#ifndef DEPTHPOSE_FFMPEG_API_H
#define DEPTHPOSE_FFMPEG_API_H

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/dict.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <stddef.h>
#include <stdint.h>
#include "lazy_load.h"

/// The FFmpeg functions the video reader and writer use, resolved with dlopen on first use
/// from libavformat (whose dependencies, libavcodec and libavutil, come with it): FFmpeg
/// and its codecs (x264, x265, dav1d, ...) are loaded only by a process that touches a
/// video, not at every start-up.
#define DEPTHPOSE_FFMPEG_API(F) \
    F(avformat_open_input, format_open_input) \
    F(avformat_find_stream_info, format_find_stream_info) \
    F(av_find_best_stream, find_best_stream) \
    F(avformat_close_input, format_close_input) \
    F(av_read_frame, read_frame) \
    F(avcodec_alloc_context3, codec_alloc_context3) \
    F(avcodec_parameters_to_context, codec_parameters_to_context) \
    F(avcodec_parameters_from_context, codec_parameters_from_context) \
    F(avcodec_open2, codec_open2) \
    F(avcodec_free_context, codec_free_context) \
    F(avcodec_send_packet, codec_send_packet) \
    F(avcodec_receive_frame, codec_receive_frame) \
    F(avcodec_send_frame, codec_send_frame) \
    F(avcodec_receive_packet, codec_receive_packet) \
    F(avcodec_find_encoder_by_name, codec_find_encoder_by_name) \
    F(avcodec_get_name, codec_get_name) \
    F(av_packet_alloc, packet_alloc) \
    F(av_packet_free, packet_free) \
    F(av_packet_unref, packet_unref) \
    F(av_packet_rescale_ts, packet_rescale_ts) \
    F(av_frame_alloc, frame_alloc) \
    F(av_frame_free, frame_free) \
    F(av_frame_get_buffer, frame_get_buffer) \
    F(av_frame_make_writable, frame_make_writable) \
    F(av_strerror, strerror) \
    F(av_pix_fmt_desc_get, pix_fmt_desc_get) \
    F(av_get_pix_fmt_name, get_pix_fmt_name) \
    F(av_log_set_level, log_set_level) \
    F(av_opt_set, opt_set) \
    F(avformat_alloc_output_context2, format_alloc_output_context2) \
    F(avformat_new_stream, format_new_stream) \
    F(avformat_write_header, format_write_header) \
    F(av_interleaved_write_frame, interleaved_write_frame) \
    F(av_write_trailer, write_trailer) \
    F(avformat_free_context, format_free_context) \
    F(avio_open, io_open) \
    F(avio_closep, io_closep) \
    F(av_dict_set, dict_set) \
    F(av_dict_free, dict_free)
struct depthpose_ffmpeg_api { DEPTHPOSE_FFMPEG_API(DEPTHPOSE_LAZY_FIELD) };

#pragma clang assume_nonnull begin

/// The API, loaded once (thread-safe); NULL when FFmpeg cannot be loaded, with the reason in
/// `error` (at most `size` bytes, NUL-terminated).
const struct depthpose_ffmpeg_api *_Nullable depthpose_ffmpeg(char *error, size_t size);

/// What a video is, from its container and decoder.
typedef struct {
    int width, height;
    /// Average frame rate (0 when the container does not say).
    double frames_per_second;
    /// Frames the container declares (-1 when it does not say).
    int64_t declared_frames;
    double duration_seconds;
    char codec[32];
    char pixel_format[32];
} depthpose_video_info;

/// One decoded frame: 8-bit planar YUV (the reader refuses other layouts), valid until the
/// next call on the reader.
typedef struct {
    const uint8_t *_Nullable planes[3];
    int strides[3];
    int width, height;
    /// log2 of the chroma subsampling (4:2:0: 1 and 1).
    int chroma_shift_x, chroma_shift_y;
    /// 1 for full-range (JPEG) levels, 0 for video range (Y 16-235, chroma 16-240).
    int full_range;
    /// 1 for BT.709 coefficients, 0 for BT.601 (the tagged colour space; untagged video at
    /// 1280 pixels wide or more counts as BT.709, as FFmpeg's converters assume).
    int bt709;
    /// Presentation time in seconds (NaN when the stream gives none).
    double seconds;
} depthpose_video_frame;

typedef struct depthpose_video_reader depthpose_video_reader;

/// Opens the first video stream of `path` for decoding on `threads` threads; with
/// `reference_only`, the decoder skips the frames no other frame refers to (FFmpeg's
/// `skip_frame = AVDISCARD_NONREF`). NULL with the reason in `error` when the file cannot be
/// opened, holds no video, or no decoder exists.
depthpose_video_reader *_Nullable depthpose_video_open(const char *path, int threads, int reference_only,
                                                        depthpose_video_info *info, char *error, size_t size);
/// The next frame in presentation order: 1 with `frame` filled, 0 at the end of the stream,
/// -1 with the reason in `error` (damaged data, an unsupported pixel layout).
int depthpose_video_next(depthpose_video_reader *reader, depthpose_video_frame *frame, char *error, size_t size);
void depthpose_video_close(depthpose_video_reader *_Nullable reader);
/// The presentation time (seconds, NAN when the packet has none) of the video stream's next
/// packet, read without decoding: 1, or 0 at the end, or -1 with the reason in `error`.
/// One packet is one frame (H.264, HEVC); not to be mixed with `depthpose_video_next`.
int depthpose_video_next_packet(depthpose_video_reader *reader, double *seconds, char *error, size_t size);

typedef struct depthpose_video_writer depthpose_video_writer;

/// A video file written through an FFmpeg encoder (`encoder`: "libx264", "libx265"),
/// 8-bit 4:2:0 video-range BT.709, constant rate `rate_num/rate_den`, quality `crf`.
depthpose_video_writer *_Nullable depthpose_video_create(const char *path, const char *encoder, int width, int height,
                                                          int rate_num, int rate_den, int crf, int threads,
                                                          char *error, size_t size);
/// Encodes one frame from its three planes (Y full size, U and V half size each way).
int depthpose_video_write(depthpose_video_writer *writer, const uint8_t *y, const uint8_t *u, const uint8_t *v,
                          int stride_y, int stride_uv, char *error, size_t size);
/// Flushes the encoder and finishes the file; frees the writer either way. 0 or -1.
int depthpose_video_finish(depthpose_video_writer *writer, char *error, size_t size);

#pragma clang assume_nonnull end

#endif
