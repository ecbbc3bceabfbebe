"""``mx.image.ImageDetIter``: batches of augmented images and box labels for detection.

Sources are ImageIter's (``path_imgrec`` [+ ``path_imgidx``], ``path_imglist``,
``imglist``). A raw label is MXNet's packed detection label
``[A, B, <A - 2 more header values>, obj_0, obj_1, ...]``: A is the header width, B the
width of one object (at least 5: ``cls, xmin, ymin, xmax, ymax`` normalised to [0, 1],
then any extra values). Objects with an empty box are dropped. Images go through
``aug_list`` (by default ``CreateDetAugmenter(data_shape, **kwargs)``), which transforms
image and label together. A batch label has shape ``(batch, max objects, B)``, rows past
an image's objects filled with -1; the maximum is measured over the whole source when
the iterator is made (``reshape`` / ``sync_label_shape`` can enlarge it).

A sample whose label does not parse, or which an augmenter leaves without a valid
object, is skipped with a logged warning naming the sample, as MXNet skips it.
"""
import logging

import numpy as np

from mxcy.base import MXNetError
from mxcy.image.augmenters import _DEFAULT_MEAN, _DEFAULT_STD
from mxcy.image.detection import CreateDetAugmenter, apply_det_aug
from mxcy.image.image import cv2_module
from mxcy.image.image_iter import ImageIter, list_entries
from mxcy.io.base import DataDesc

__all__ = ['ImageDetIter']


def parse_det_label(raw, where='ImageDetIter'):
    """The (objects, B) array of valid objects in packed detection label `raw`."""
    raw = np.asarray(raw, dtype=np.float32).ravel()
    if raw.size < 7:
        raise MXNetError(f"{where}: a detection label needs at least 7 values (header width, "
                         f"object width, one object of 5), got {raw.size}")
    header, width = int(raw[0]), int(raw[1])
    if header < 2 or width < 5:
        raise MXNetError(f"{where}: label header width must be >= 2 and object width >= 5, "
                         f"got header width {header}, object width {width}")
    if (raw.size - header) % width:
        raise MXNetError(f"{where}: {raw.size} label values minus a header of {header} do "
                         f"not split into objects of width {width}")
    objs = raw[header:].reshape(-1, width)
    valid = (objs[:, 3] > objs[:, 1]) & (objs[:, 4] > objs[:, 2])
    if not valid.any():
        raise MXNetError(f"{where}: the sample has no valid object (every box has "
                         "xmax <= xmin or ymax <= ymin)")
    return objs[valid]


class ImageDetIter(ImageIter):
    """Detection image iterator with augmentation (see the module docstring)."""

    def __init__(self, batch_size, data_shape, path_imgrec=None, path_imglist=None,
                 path_root=None, path_imgidx=None, shuffle=False, part_index=0, num_parts=1,
                 aug_list=None, imglist=None, data_name='data', label_name='label',
                 last_batch_handle='pad', **kwargs):
        super().__init__(batch_size=batch_size, data_shape=data_shape,
                         path_imgrec=path_imgrec, path_imglist=path_imglist,
                         path_root=path_root, path_imgidx=path_imgidx, shuffle=shuffle,
                         part_index=part_index, num_parts=num_parts, aug_list=[],
                         imglist=imglist, data_name=data_name, label_name=label_name,
                         last_batch_handle=last_batch_handle)
        self.auglist = CreateDetAugmenter(data_shape, **kwargs) if aug_list is None \
            else aug_list
        self.label_shape = self._estimate_label_shape()
        self.provide_label = [DataDesc(label_name, (self.batch_size,) + self.label_shape,
                                       np.float32)]

    def _read_list(self, path):
        imglist, seq = {}, []
        for lineno, entry, error in list_entries(path):
            if error is not None:
                raise MXNetError(f"ImageDetIter: {path!r}, line {lineno}: {error}")
            key, labels, image_path = entry
            imglist[key] = (np.array(labels, dtype=np.float32), image_path)
            seq.append(key)
        return imglist, seq

    def _estimate_label_shape(self):
        """(max objects, object width) over every sample of the source."""
        count, width = 0, None
        self.reset()
        try:
            while True:
                label, _ = self.next_sample()
                objs = parse_det_label(label, f"ImageDetIter (sample {self.cur - 1})")
                count = max(count, objs.shape[0])
                if width is not None and objs.shape[1] != width:
                    raise MXNetError(f"ImageDetIter: object width {objs.shape[1]} of sample "
                                     f"{self.cur - 1} differs from the earlier {width}")
                width = objs.shape[1]
        except StopIteration:
            pass
        self.reset()
        if width is None:
            raise MXNetError("ImageDetIter: the source holds no sample")
        return (count, width)

    def _empty_labels(self):
        return np.full(self.provide_label[0].shape, -1.0, dtype=np.float32)

    def augmentation_transform(self, data, label):
        """Run the augmenter list on one HWC image and its (objects, B) label."""
        for aug in self.auglist:
            data, label = apply_det_aug(aug, data, label)
        return data, label

    def _check_valid_label(self, label):
        if label.ndim != 2 or label.shape[1] < 5:
            raise MXNetError(f"ImageDetIter: an augmented label must be (objects, >=5), got "
                             f"shape {label.shape}")
        valid = (label[:, 0] >= 0) & (label[:, 3] > label[:, 1]) & (label[:, 4] > label[:, 2])
        if not valid.any():
            raise MXNetError("ImageDetIter: no valid object left after augmentation")

    def _sample(self):
        """The next (image, label) that decodes, parses and augments; logs the others."""
        while True:
            raw, s = self.next_sample()
            try:
                img = self.imdecode(s)
                label = parse_det_label(raw)
                img, label = self.augmentation_transform(img, label)
                self._check_valid_label(label)
            except MXNetError as err:
                logging.warning("ImageDetIter: skipping sample %d: %s", self.cur - 1, err)
                continue
            return img, label

    def _fill(self, data, labels, start):
        i = start
        while i < self.batch_size:
            try:
                img, label = self._sample()
            except StopIteration:
                return i
            if img.shape[:2] != self.data_shape[1:] or img.shape[2] != self.data_shape[0]:
                raise MXNetError(f"ImageDetIter: an augmented image has shape {img.shape} "
                                 f"(HWC); data_shape {self.data_shape} (CHW) needs the "
                                 "augmenters to resize to it")
            if label.shape[0] > labels.shape[1] or label.shape[1] != labels.shape[2]:
                raise MXNetError(f"ImageDetIter: sample {self.cur - 1} has a label of shape "
                                 f"{label.shape}; the batch holds {labels.shape[1:]} per "
                                 "image (see reshape / sync_label_shape)")
            data[i] = self.postprocess_data(img)
            labels[i, :label.shape[0]] = label
            i += 1
        return i

    def check_label_shape(self, label_shape):
        """Check that `label_shape` = (objects, width) may replace the current one."""
        if len(label_shape) != 2:
            raise ValueError(f"ImageDetIter: label_shape must be (objects, width), got "
                             f"{label_shape!r}")
        if label_shape[0] < self.label_shape[0]:
            raise ValueError(f"ImageDetIter: label_shape may not reduce the object count "
                             f"from {self.label_shape[0]} to {label_shape[0]}")
        if label_shape[1] != self.label_shape[1]:
            raise ValueError(f"ImageDetIter: label_shape object width {label_shape[1]} "
                             f"differs from the data's {self.label_shape[1]}")

    def reshape(self, data_shape=None, label_shape=None):
        """Change the batch's data shape (C, H, W) and/or label shape (objects, width)."""
        if data_shape is not None:
            data_shape = tuple(data_shape)
            if len(data_shape) != 3 or data_shape[0] != 3:
                raise ValueError(f"ImageDetIter: data_shape must be (3, height, width), got "
                                 f"{data_shape!r}")
            desc = self.provide_data[0]
            self.provide_data = [DataDesc(desc.name, (self.batch_size,) + data_shape,
                                          self.dtype)]
            self.data_shape = data_shape
        if label_shape is not None:
            label_shape = tuple(label_shape)
            self.check_label_shape(label_shape)
            desc = self.provide_label[0]
            self.provide_label = [DataDesc(desc.name, (self.batch_size,) + label_shape,
                                           np.float32)]
            self.label_shape = label_shape

    def sync_label_shape(self, it, verbose=False):
        """Give this iterator and ImageDetIter `it` the same (largest) label shape;
        returns `it`."""
        if not isinstance(it, ImageDetIter):
            raise TypeError(f"sync_label_shape: it must be an ImageDetIter, got "
                            f"{type(it).__name__}")
        if self.label_shape[1] != it.label_shape[1]:
            raise ValueError(f"sync_label_shape: object widths differ: {self.label_shape[1]} "
                             f"vs {it.label_shape[1]}")
        count = max(self.label_shape[0], it.label_shape[0])
        for which in (self, it):
            if which.label_shape[0] < count:
                if verbose:
                    logging.info("Resized label_shape from %s to %s", which.label_shape,
                                 (count, self.label_shape[1]))
                which.reshape(None, (count, self.label_shape[1]))
        return it

    def draw_next(self, color=None, thickness=2, mean=None, std=None, clip=True,
                  waitKey=None, window_name='draw_next', id2labels=None):
        """Yield the next augmented images (HWC, BGR float32 for OpenCV) with their boxes
        drawn; `mean`/`std` (True: ImageNet's) undo a normalisation first. With
        `waitKey`, each image is also shown in the OpenCV window `window_name`."""
        cv2 = cv2_module()
        std = np.array(_DEFAULT_STD) if std is True else std
        mean = np.array(_DEFAULT_MEAN) if mean is True else mean
        rng = np.random.RandomState(0)
        colors = {}
        while True:
            try:
                img, label = self._sample()
            except StopIteration:
                return
            image = np.array(img, dtype=np.float32)
            if std is not None:
                image *= np.asarray(std, dtype=np.float32)
            if mean is not None:
                image += np.asarray(mean, dtype=np.float32)
            image = np.ascontiguousarray(image[:, :, ::-1])
            if clip:
                image = np.clip(image, 0, 255)
            height, width = image.shape[:2]
            for obj in label:
                cls = int(obj[0])
                if cls < 0:
                    continue
                box_color = color or colors.setdefault(cls, tuple(rng.randint(0, 256, 3)
                                                                   .tolist()))
                p1 = (int(obj[1] * width), int(obj[2] * height))
                p2 = (int(obj[3] * width), int(obj[4] * height))
                cv2.rectangle(image, p1, p2, box_color, thickness)
                if id2labels is not None:
                    name = id2labels.get(cls, str(cls)) if isinstance(id2labels, dict) \
                        else id2labels[cls]
                    cv2.putText(image, str(name), (p1[0], max(p1[1] - 2, 8)),
                                cv2.FONT_HERSHEY_SIMPLEX, 0.4, box_color, 1)
            if waitKey is not None:
                cv2.imshow(window_name, image.astype(np.uint8))
                cv2.waitKey(waitKey)
            yield image
