/* The README's runtime example: upload a frame on a stream, wait for it on
 * another stream through an event, read it back. Built and run by meson test. */
#include <npu/npu.h>
#include <stdio.h>
#include <string.h>

#define CHECK(call) do { npu_status s_ = (call); if (s_ != NPU_OK) { \
  fprintf(stderr, "%s: %s\n", #call, npu_last_error_message()); return 1; } } while (0)

int main(void)
{
  unsigned char frame[4096], back[4096];
  memset(frame, 0x42, sizeof frame);
  npu_device *dev; npu_stream *upload, *infer; npu_event *uploaded; npu_buffer *buf;
  CHECK(npu_device_open_default(&dev));          /* NPU_BACKEND / NPU_DEVICE choose */
  CHECK(npu_stream_create(dev, &upload));
  CHECK(npu_stream_create(dev, &infer));
  CHECK(npu_event_create(dev, NPU_EVENT_DEFAULT, &uploaded));
  CHECK(npu_buffer_alloc(dev, sizeof frame, &buf));
  CHECK(npu_memcpy_h2d_async(buf, 0, frame, sizeof frame, upload));
  CHECK(npu_event_record(uploaded, upload));
  CHECK(npu_stream_wait_event(infer, uploaded));  /* the device waits, not this thread */
  CHECK(npu_memcpy_d2h_async(back, buf, 0, sizeof back, infer));
  CHECK(npu_stream_synchronize(infer));
  printf("round trip %s\n", memcmp(frame, back, sizeof frame) ? "CORRUPT" : "ok");
  npu_buffer_release(buf); npu_event_destroy(uploaded);
  npu_stream_destroy(infer); npu_stream_destroy(upload); npu_device_release(dev);
  return memcmp(frame, back, sizeof frame) != 0;
}
