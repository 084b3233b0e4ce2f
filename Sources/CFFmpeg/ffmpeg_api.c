#include "ffmpeg_api.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

DEPTHPOSE_LAZY_SHIM(depthpose_ffmpeg, depthpose_ffmpeg_api, DEPTHPOSE_FFMPEG_API, "FFmpeg (libavformat)", "libavformat59",
                    NULL, "libavformat.so.59", "libavformat.so.60", "libavformat.so.61", "libavformat.so")

/// Writes "what: FFmpeg's reason" into `error`.
static void fail(const struct depthpose_ffmpeg_api *ff, int code, char *error, size_t size, const char *what, ...) {
    char reason[256] = "";
    if (code < 0 && ff) ff->strerror(code, reason, sizeof reason);
    char text[384];
    va_list args;
    va_start(args, what);
    vsnprintf(text, sizeof text, what, args);
    va_end(args);
    if (reason[0]) snprintf(error, size, "%s: %s", text, reason);
    else snprintf(error, size, "%s", text);
}

/// The demuxers a scan's video may be read with: MP4/MOV (ARKit-Scanner, Stray) and
/// Matroska (ScanNet++).
#define DEPTHPOSE_VIDEO_CONTAINERS "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm"

struct depthpose_video_reader {
    const struct depthpose_ffmpeg_api *ff;
    AVFormatContext *format;
    AVCodecContext *codec;
    AVPacket *packet;
    AVFrame *frame;
    int stream;
    AVRational time_base;
    int draining, finished;
    int64_t frames;
};

void depthpose_video_close(depthpose_video_reader *r) {
    if (!r) return;
    const struct depthpose_ffmpeg_api *ff = r->ff;
    if (r->frame) ff->frame_free(&r->frame);
    if (r->packet) ff->packet_free(&r->packet);
    if (r->codec) ff->codec_free_context(&r->codec);
    if (r->format) ff->format_close_input(&r->format);
    free(r);
}

depthpose_video_reader *depthpose_video_open(const char *path, int threads, int reference_only, depthpose_video_info *info, char *error,
                                              size_t size) {
    const struct depthpose_ffmpeg_api *ff = depthpose_ffmpeg(error, size);
    if (!ff) return NULL;
    ff->log_set_level(AV_LOG_QUIET);  // errors come back as codes and frame flags, reported by the caller
    depthpose_video_reader *r = calloc(1, sizeof *r);
    if (!r) { snprintf(error, size, "out of memory"); return NULL; }
    r->ff = ff;
    // Scans are untrusted: only the file named (no URL protocols: a scan folder called
    // "http:..." or "concat:..." stays a path, and nothing it references is fetched) and only
    // the containers capture apps write (no playlists or scripts that open other files).
    AVDictionary *options = NULL;
    ff->dict_set(&options, "protocol_whitelist", "file", 0);
    ff->dict_set(&options, "format_whitelist", DEPTHPOSE_VIDEO_CONTAINERS, 0);
    char *url = malloc(strlen(path) + 6);
    if (!url) { snprintf(error, size, "out of memory"); ff->dict_free(&options); goto failed; }
    memcpy(url, "file:", 5);
    memcpy(url + 5, path, strlen(path) + 1);
    int code = ff->format_open_input(&r->format, url, NULL, &options);
    free(url);
    ff->dict_free(&options);
    if (code < 0) { fail(ff, code, error, size, "cannot open as a video container (%s)", DEPTHPOSE_VIDEO_CONTAINERS); r->format = NULL; goto failed; }
    code = ff->format_find_stream_info(r->format, NULL);
    if (code < 0) { fail(ff, code, error, size, "cannot read the streams"); goto failed; }
    const AVCodec *decoder = NULL;
    r->stream = ff->find_best_stream(r->format, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0);
    if (r->stream == AVERROR_STREAM_NOT_FOUND) { fail(ff, 0, error, size, "holds no video stream"); goto failed; }
    if (r->stream < 0 || !decoder) { fail(ff, r->stream, error, size, "no decoder for its video stream"); goto failed; }
    AVStream *stream = r->format->streams[r->stream];
    r->time_base = stream->time_base;
    r->codec = ff->codec_alloc_context3(decoder);
    if (!r->codec) { fail(ff, 0, error, size, "out of memory"); goto failed; }
    code = ff->codec_parameters_to_context(r->codec, stream->codecpar);
    if (code < 0) { fail(ff, code, error, size, "cannot set up the decoder"); goto failed; }
    r->codec->thread_count = threads > 0 ? threads : 1;
    r->codec->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
    if (reference_only) r->codec->skip_frame = AVDISCARD_NONREF;
    code = ff->codec_open2(r->codec, decoder, NULL);
    if (code < 0) { fail(ff, code, error, size, "cannot open the %s decoder", decoder->name); goto failed; }
    r->packet = ff->packet_alloc();
    r->frame = ff->frame_alloc();
    if (!r->packet || !r->frame) { fail(ff, 0, error, size, "out of memory"); goto failed; }
    memset(info, 0, sizeof *info);
    info->width = r->codec->width;
    info->height = r->codec->height;
    AVRational rate = stream->avg_frame_rate;
    info->frames_per_second = rate.den > 0 && rate.num > 0 ? (double)rate.num / rate.den : 0;
    info->declared_frames = stream->nb_frames > 0 ? stream->nb_frames : -1;
    info->duration_seconds = r->format->duration > 0 ? (double)r->format->duration / AV_TIME_BASE : 0;
    snprintf(info->codec, sizeof info->codec, "%s", ff->codec_get_name(r->codec->codec_id));
    const char *pixels = ff->get_pix_fmt_name(r->codec->pix_fmt);
    snprintf(info->pixel_format, sizeof info->pixel_format, "%s", pixels ? pixels : "unknown");
    return r;
failed:
    depthpose_video_close(r);
    return NULL;
}

/// Fills `out` from the decoded frame, or fails for layouts other than 8-bit planar YUV.
static int describe(depthpose_video_reader *r, depthpose_video_frame *out, char *error, size_t size) {
    const struct depthpose_ffmpeg_api *ff = r->ff;
    AVFrame *f = r->frame;
    if (f->decode_error_flags || (f->flags & AV_FRAME_FLAG_CORRUPT)) {
        fail(ff, 0, error, size, "frame %lld is damaged (decoder error flags 0x%x)", (long long)r->frames, f->decode_error_flags);
        return -1;
    }
    const AVPixFmtDescriptor *d = ff->pix_fmt_desc_get(f->format);
    const char *name = ff->get_pix_fmt_name(f->format);
    if (!d || !(d->flags & AV_PIX_FMT_FLAG_PLANAR) || (d->flags & AV_PIX_FMT_FLAG_RGB) || d->nb_components < 3 ||
        d->comp[0].depth != 8 || d->comp[1].plane != 1 || d->comp[2].plane != 2) {
        fail(ff, 0, error, size, "frame %lld has pixel format %s; 8-bit planar YUV is supported", (long long)r->frames,
             name ? name : "unknown");
        return -1;
    }
    for (int p = 0; p < 3; p++) { out->planes[p] = f->data[p]; out->strides[p] = f->linesize[p]; }
    out->width = f->width;
    out->height = f->height;
    out->chroma_shift_x = d->log2_chroma_w;
    out->chroma_shift_y = d->log2_chroma_h;
    out->full_range = f->color_range == AVCOL_RANGE_JPEG || f->format == AV_PIX_FMT_YUVJ420P ||
                      f->format == AV_PIX_FMT_YUVJ422P || f->format == AV_PIX_FMT_YUVJ444P;
    if (f->colorspace == AVCOL_SPC_BT709) out->bt709 = 1;
    else if (f->colorspace == AVCOL_SPC_UNSPECIFIED || f->colorspace == AVCOL_SPC_RESERVED) out->bt709 = f->width >= 1280;
    else out->bt709 = 0;
    int64_t t = f->best_effort_timestamp;
    out->seconds = t == AV_NOPTS_VALUE ? NAN : (double)t * r->time_base.num / r->time_base.den;
    r->frames++;
    return 1;
}

int depthpose_video_next(depthpose_video_reader *r, depthpose_video_frame *out, char *error, size_t size) {
    const struct depthpose_ffmpeg_api *ff = r->ff;
    if (r->finished) return 0;
    for (;;) {
        int code = ff->codec_receive_frame(r->codec, r->frame);
        if (code == 0) return describe(r, out, error, size);
        if (code == AVERROR_EOF) { r->finished = 1; return 0; }
        if (code != AVERROR(EAGAIN)) { fail(ff, code, error, size, "decoding frame %lld", (long long)r->frames); return -1; }
        if (r->draining) { r->finished = 1; return 0; }
        // The decoder wants input: the next packet of the stream, or the end.
        code = ff->read_frame(r->format, r->packet);
        if (code == AVERROR_EOF) {
            r->draining = 1;
            code = ff->codec_send_packet(r->codec, NULL);
            if (code < 0 && code != AVERROR_EOF) { fail(ff, code, error, size, "flushing the decoder"); return -1; }
            continue;
        }
        if (code < 0) { fail(ff, code, error, size, "reading the container after frame %lld", (long long)r->frames); return -1; }
        if (r->packet->stream_index == r->stream) {
            code = ff->codec_send_packet(r->codec, r->packet);
            ff->packet_unref(r->packet);
            if (code < 0 && code != AVERROR(EAGAIN)) { fail(ff, code, error, size, "decoding frame %lld", (long long)r->frames); return -1; }
        } else {
            ff->packet_unref(r->packet);
        }
    }
}

int depthpose_video_next_packet(depthpose_video_reader *r, double *seconds, char *error, size_t size) {
    const struct depthpose_ffmpeg_api *ff = r->ff;
    for (;;) {
        int code = ff->read_frame(r->format, r->packet);
        if (code == AVERROR_EOF) return 0;
        if (code < 0) { fail(ff, code, error, size, "reading the container after packet %lld", (long long)r->frames); return -1; }
        int ours = r->packet->stream_index == r->stream;
        int64_t t = r->packet->pts;
        ff->packet_unref(r->packet);
        if (!ours) continue;
        *seconds = t == AV_NOPTS_VALUE ? NAN : (double)t * r->time_base.num / r->time_base.den;
        r->frames++;
        return 1;
    }
}

struct depthpose_video_writer {
    const struct depthpose_ffmpeg_api *ff;
    AVFormatContext *format;
    AVCodecContext *codec;
    AVStream *stream;
    AVFrame *frame;
    AVPacket *packet;
    int64_t next_pts;
};

static void free_writer(depthpose_video_writer *w) {
    const struct depthpose_ffmpeg_api *ff = w->ff;
    if (w->frame) ff->frame_free(&w->frame);
    if (w->packet) ff->packet_free(&w->packet);
    if (w->codec) ff->codec_free_context(&w->codec);
    if (w->format) {
        if (w->format->pb) ff->io_closep(&w->format->pb);
        ff->format_free_context(w->format);
    }
    free(w);
}

/// Writes out every packet the encoder has ready.
static int drain(depthpose_video_writer *w, char *error, size_t size) {
    const struct depthpose_ffmpeg_api *ff = w->ff;
    for (;;) {
        int code = ff->codec_receive_packet(w->codec, w->packet);
        if (code == AVERROR(EAGAIN) || code == AVERROR_EOF) return 0;
        if (code < 0) { fail(ff, code, error, size, "encoding"); return -1; }
        ff->packet_rescale_ts(w->packet, w->codec->time_base, w->stream->time_base);
        w->packet->stream_index = w->stream->index;
        code = ff->interleaved_write_frame(w->format, w->packet);
        if (code < 0) { fail(ff, code, error, size, "writing a packet"); return -1; }
    }
}

depthpose_video_writer *depthpose_video_create(const char *path, const char *encoder, int width, int height, int rate_num,
                                                int rate_den, int crf, int threads, char *error, size_t size) {
    const struct depthpose_ffmpeg_api *ff = depthpose_ffmpeg(error, size);
    if (!ff) return NULL;
    ff->log_set_level(AV_LOG_QUIET);
    depthpose_video_writer *w = calloc(1, sizeof *w);
    if (!w) { snprintf(error, size, "out of memory"); return NULL; }
    w->ff = ff;
    int code = ff->format_alloc_output_context2(&w->format, NULL, NULL, path);
    if (code < 0 || !w->format) { fail(ff, code, error, size, "no container format for this file name"); goto failed; }
    const AVCodec *codec = ff->codec_find_encoder_by_name(encoder);
    if (!codec) { fail(ff, 0, error, size, "FFmpeg has no encoder %s", encoder); goto failed; }
    w->stream = ff->format_new_stream(w->format, NULL);
    w->codec = ff->codec_alloc_context3(codec);
    w->frame = ff->frame_alloc();
    w->packet = ff->packet_alloc();
    if (!w->stream || !w->codec || !w->frame || !w->packet) { fail(ff, 0, error, size, "out of memory"); goto failed; }
    AVCodecContext *c = w->codec;
    c->width = width;
    c->height = height;
    c->pix_fmt = AV_PIX_FMT_YUV420P;
    c->time_base = (AVRational){rate_den, rate_num};
    c->framerate = (AVRational){rate_num, rate_den};
    c->color_range = AVCOL_RANGE_MPEG;
    c->colorspace = AVCOL_SPC_BT709;
    c->color_primaries = AVCOL_PRI_BT709;
    c->color_trc = AVCOL_TRC_BT709;
    c->thread_count = threads > 0 ? threads : 1;
    if (w->format->oformat->flags & AVFMT_GLOBALHEADER) c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    char quality[16];
    snprintf(quality, sizeof quality, "%d", crf);
    ff->opt_set(c->priv_data, "crf", quality, 0);
    ff->opt_set(c->priv_data, "preset", "veryfast", 0);
    if (strcmp(encoder, "libx265") == 0) ff->opt_set(c->priv_data, "x265-params", "log-level=none", 0);
    // Where the CPU has AVX-512, x264 takes its AVX-512 code, and with it the same frames
    // (checked byte for byte as handed to the encoder) gave different files depending on what
    // had run before in the process: synth's colour video after another test in the same test
    // process differed in 8 of 16 runs on an AVX-512 Xeon, most likely from memory the encoder
    // reads without having written it. Kept to the instructions up to AVX2 (which every CPU
    // with AVX-512 has) it gave the same bytes in 32 of 32 runs, and in a fresh process the
    // same bytes as its AVX-512 code.
    if (strcmp(encoder, "libx264") == 0 && __builtin_cpu_supports("avx512f"))
        ff->opt_set(c->priv_data, "x264-params", "asm=AVX2,BMI2,LZCNT", 0);
    code = ff->codec_open2(c, codec, NULL);
    if (code < 0) { fail(ff, code, error, size, "cannot open the %s encoder", encoder); goto failed; }
    code = ff->codec_parameters_from_context(w->stream->codecpar, c);
    if (code < 0) { fail(ff, code, error, size, "cannot set up the stream"); goto failed; }
    w->stream->time_base = c->time_base;
    w->stream->avg_frame_rate = c->framerate;
    code = ff->io_open(&w->format->pb, path, AVIO_FLAG_WRITE);
    if (code < 0) { fail(ff, code, error, size, "cannot create the file"); goto failed; }
    code = ff->format_write_header(w->format, NULL);
    if (code < 0) { fail(ff, code, error, size, "cannot write the container header"); goto failed; }
    w->frame->format = AV_PIX_FMT_YUV420P;
    w->frame->width = width;
    w->frame->height = height;
    code = ff->frame_get_buffer(w->frame, 0);
    if (code < 0) { fail(ff, code, error, size, "out of memory"); goto failed; }
    return w;
failed:
    free_writer(w);
    return NULL;
}

int depthpose_video_write(depthpose_video_writer *w, const uint8_t *y, const uint8_t *u, const uint8_t *v, int stride_y,
                          int stride_uv, char *error, size_t size) {
    const struct depthpose_ffmpeg_api *ff = w->ff;
    int code = ff->frame_make_writable(w->frame);
    if (code < 0) { fail(ff, code, error, size, "out of memory"); return -1; }
    AVFrame *f = w->frame;
    int cw = (f->width + 1) / 2, ch = (f->height + 1) / 2;
    for (int row = 0; row < f->height; row++) memcpy(f->data[0] + (size_t)row * f->linesize[0], y + (size_t)row * stride_y, f->width);
    for (int row = 0; row < ch; row++) {
        memcpy(f->data[1] + (size_t)row * f->linesize[1], u + (size_t)row * stride_uv, cw);
        memcpy(f->data[2] + (size_t)row * f->linesize[2], v + (size_t)row * stride_uv, cw);
    }
    f->pts = w->next_pts++;
    code = ff->codec_send_frame(w->codec, f);
    if (code < 0) { fail(ff, code, error, size, "encoding frame %lld", (long long)f->pts); return -1; }
    return drain(w, error, size);
}

int depthpose_video_finish(depthpose_video_writer *w, char *error, size_t size) {
    const struct depthpose_ffmpeg_api *ff = w->ff;
    int result = 0;
    int code = ff->codec_send_frame(w->codec, NULL);
    if (code < 0) { fail(ff, code, error, size, "flushing the encoder"); result = -1; }
    if (result == 0 && drain(w, error, size) < 0) result = -1;
    if (result == 0) {
        code = ff->write_trailer(w->format);
        if (code < 0) { fail(ff, code, error, size, "finishing the container"); result = -1; }
    }
    free_writer(w);
    return result;
}
