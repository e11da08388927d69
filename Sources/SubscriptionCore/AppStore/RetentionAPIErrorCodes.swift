import Foundation

/// An error the Retention Messaging API answers with, as a value: the codes Apple's "Error
/// codes" page of the API names (the numbers as Apple's App Store Server Library gives
/// them; the page's entries name the error objects without their values). The HTTP status
/// is the code's first three digits. The general codes the API shares with the rest of the
/// App Store Server API (4000000, 4000023, 4290000, 5000000…) stay in `AppStoreAPIErrorCode`.
public enum RetentionAPIError: Int, CaseIterable, Sendable {
    case invalidImage = 4000161
    case headerTooLong = 4000162
    case bodyTooLong = 4000163
    case invalidLocale = 4000164
    case altTextTooLong = 4000175
    case invalidPerformanceTestRequest = 4000211
    case invalidRequestId = 4000212
    case existingPerformanceTestRun = 4000213
    case badRequestRealtimeURL = 4000215
    case badRequestImageSize = 4000216
    case tooManyBulletPoints = 4000218
    case bulletPointTextTooLong = 4000219
    case aboveImageRequiresAnImage = 4000224
    case maximumNumberOfImagesReached = 4030014
    case maximumNumberOfMessagesReached = 4030016
    case messageNotApproved = 4030017
    case imageNotApproved = 4030018
    case imageInUse = 4030019
    case forbiddenNoPassingTest = 4030026
    case imageNotFound = 4040014
    case messageNotFound = 4040015
    case performanceTestRunNotFound = 4040018
    case defaultMessageNotFound = 4040020
    case realtimeURLNotFound = 4040021
    case imageAlreadyExists = 4090000
    case messageAlreadyExists = 4090001

    /// The HTTP status Apple sends it with.
    public var status: Int { rawValue / 10_000 }

    /// Apple's name for it and what it means, in an operator's words.
    public var entry: (name: String, meaning: String) {
        switch self {
        case .invalidImage: return ("InvalidImageError", "the image being uploaded is invalid")
        case .headerTooLong: return ("HeaderTooLongError", "the message header is too long")
        case .bodyTooLong: return ("BodyTooLongError", "the message body is too long")
        case .invalidLocale: return ("InvalidLocaleError", "invalid locale")
        case .altTextTooLong: return ("AltTextTooLongError", "an image's alternative text is too long")
        case .invalidPerformanceTestRequest: return ("InvalidPerformanceTestRequestError", "invalid performance test request")
        case .invalidRequestId: return ("InvalidRequestIdError", "invalid performance test request id")
        case .existingPerformanceTestRun: return ("ExistingPerformanceTestRunError", "a performance test is already running")
        case .badRequestRealtimeURL: return ("BadRequestRealtimeUrlError", "invalid real-time URL")
        case .badRequestImageSize: return ("BadRequestImageSizeError", "invalid image size")
        case .tooManyBulletPoints: return ("BadRequestTooManyBulletPointsError", "too many bullet points")
        case .bulletPointTextTooLong: return ("BadRequestBulletPointTextTooLongError", "a bullet point's text is too long")
        case .aboveImageRequiresAnImage: return ("BadRequestAboveImageRequiresAnImageError", "the header is placed above an image the message lacks")
        case .maximumNumberOfImagesReached: return ("MaximumNumberOfImagesReachedError", "the most images Apple keeps are uploaded")
        case .maximumNumberOfMessagesReached: return ("MaximumNumberOfMessagesReachedError", "the most messages Apple keeps are uploaded")
        case .messageNotApproved: return ("MessageNotApprovedError", "the message is not APPROVED, so it cannot be a default")
        case .imageNotApproved: return ("ImageNotApprovedError", "the message's image is not APPROVED, so it cannot be a default")
        case .imageInUse: return ("ImageInUseError", "a message shows the image, so it cannot be deleted")
        case .forbiddenNoPassingTest: return ("ForbiddenNoPassingTestError", "Production's real-time URL needs a passed performance test first")
        case .imageNotFound: return ("ImageNotFoundError", "no image with this identifier")
        case .messageNotFound: return ("MessageNotFoundError", "no message with this identifier")
        case .performanceTestRunNotFound: return ("PerformanceTestRunNotFoundError", "no performance test with this request id")
        case .defaultMessageNotFound: return ("DefaultMessageNotFoundError", "no default message is configured")
        case .realtimeURLNotFound: return ("RealtimeUrlNotFoundError", "no real-time URL is configured")
        case .imageAlreadyExists: return ("ImageAlreadyExistsError", "an image with this identifier was already uploaded")
        case .messageAlreadyExists: return ("MessageAlreadyExistsError", "a message with this identifier was already uploaded")
        }
    }
}

extension RevalidationError {
    /// The Retention Messaging API's own error this is, when Apple answered with one.
    public var retentionError: RetentionAPIError? {
        guard case .http(_, _, let code?, _, _) = self else { return nil }
        return RetentionAPIError(rawValue: code)
    }
}
