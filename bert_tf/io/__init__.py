"""Files on any file system TensorFlow serves (gs:// too): paths and folders (`filesystem`),
whole-or-nothing writes and text inputs (`fileio`), TFRecords (`tfrecord`) and
tensorflow-datasets (`tfds`)."""
