"""``mx.image``: image decoding, resizing, cropping, augmenters and ``ImageIter``
(MXNet 1.9.1 names and arguments; OpenCV does the pixel work, as in MXNet)."""
from mxcy.image.image import (imdecode, imread, imresize, resize_short, fixed_crop,
                              random_crop, center_crop, color_normalize, random_size_crop,
                              scale_down, copyMakeBorder)
from mxcy.image.rotate import imrotate, random_rotate
from mxcy.image.augmenters import (Augmenter, SequentialAug, ResizeAug, ForceResizeAug,
                                   RandomCropAug, RandomSizedCropAug, CenterCropAug,
                                   RandomOrderAug, BrightnessJitterAug, ContrastJitterAug,
                                   SaturationJitterAug, HueJitterAug, ColorJitterAug,
                                   LightingAug, ColorNormalizeAug, RandomGrayAug,
                                   HorizontalFlipAug, CastAug, CreateAugmenter)
from mxcy.image.image_iter import ImageIter
from mxcy.image.detection import (DetAugmenter, DetBorrowAug, DetRandomSelectAug,
                                  DetHorizontalFlipAug, DetRandomCropAug, DetRandomPadAug,
                                  CreateMultiRandCropAugmenter, CreateDetAugmenter)
from mxcy.image.det_iter import ImageDetIter
