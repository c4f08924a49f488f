"""Decoding calibration pictures and videos into RGB(A) frames: PPM/PGM in
numpy, everything else through GStreamer (python3-gi), which may be absent."""
import numpy as np

PNM_SUFFIXES = (".ppm", ".pgm", ".pnm")


class DecodeError(Exception):
    pass


def read_pnm(path):
    """A binary PPM (P6) or PGM (P5) of 8 bits as an (H, W, 3) uint8 RGB array."""
    with open(path, "rb") as f:
        data = f.read()
    fields, position = [], 0
    while len(fields) < 4:  # magic, width, height, maxval; '#' comments between them
        while position < len(data) and data[position:position + 1].isspace():
            position += 1
        if data[position:position + 1] == b"#":
            position = data.index(b"\n", position)
            continue
        end = position
        while end < len(data) and not data[end:end + 1].isspace():
            end += 1
        fields.append(data[position:end])
        position = end
    magic, width, height, maxval = fields[0], *map(int, fields[1:])
    if magic not in (b"P5", b"P6") or maxval > 255:
        raise DecodeError(f"{path}: only 8-bit binary PPM (P6) and PGM (P5) are read")
    channels = 3 if magic == b"P6" else 1
    pixels = np.frombuffer(data, np.uint8, width * height * channels, position + 1)
    pixels = pixels.reshape(height, width, channels)
    return np.repeat(pixels, 3, axis=2) if channels == 1 else pixels


def gstreamer_frames(path):
    """Every decoded frame of a picture or video file as (H, W, 4) RGBA uint8."""
    try:
        import gi
        gi.require_version("Gst", "1.0")
        from gi.repository import Gst
    except (ImportError, ValueError) as error:
        raise DecodeError(f"{path}: decoding it needs GStreamer's Python bindings "
                          f"(python3-gi, gir1.2-gst-1.0): {error}") from None
    Gst.init(None)
    pipeline = Gst.parse_launch("filesrc name=source ! decodebin ! videoconvert ! "
                                "video/x-raw,format=RGBA ! appsink name=sink sync=false")
    pipeline.get_by_name("source").set_property("location", path)
    sink, bus = pipeline.get_by_name("sink"), pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    try:
        while True:
            sample = sink.emit("try-pull-sample", Gst.SECOND // 10)
            if sample is not None:
                yield rgba_array(sample)
            elif sink.get_property("eos"):
                break
            else:  # nothing yet: a decoding error ends the pipeline without an EOS
                message = bus.pop_filtered(Gst.MessageType.ERROR)
                if message is not None:
                    raise DecodeError(f"{path}: {message.parse_error()[0].message}")
    finally:
        pipeline.set_state(Gst.State.NULL)


def rgba_array(sample):
    structure = sample.get_caps().get_structure(0)
    width, height = structure.get_value("width"), structure.get_value("height")
    buffer = sample.get_buffer()
    frame = np.frombuffer(buffer.extract_dup(0, buffer.get_size()), np.uint8)
    return frame[:width * height * 4].reshape(height, width, 4)  # RGBA rows have no padding


def frames(path):
    """(format, frame) pairs of a picture or video for npu.to_tensor."""
    if path.lower().endswith(PNM_SUFFIXES):
        yield "RGB", read_pnm(path)
    else:
        for frame in gstreamer_frames(path):
            yield "RGBA", frame
